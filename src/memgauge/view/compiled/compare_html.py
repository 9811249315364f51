from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'compare.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'compare.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Compare'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_url = resolve('url')
    l_0_c = resolve('c')
    try:
        t_1 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_2 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_3 = environment.filters['p']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'p' found.")
    try:
        t_4 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_5 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    try:
        t_6 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<h1>Compare runs</h1>\n<p class="meta">A: <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'run_id'), )), _block_vars=_block_vars))
    yield '">'
    yield escape(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'suite_name'))
    yield ' · '
    yield escape(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'run_id'))
    yield '</a> ('
    yield escape(t_5(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'created_at')))
    yield ')<br>\nB: <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'run_id'), )), _block_vars=_block_vars))
    yield '">'
    yield escape(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'suite_name'))
    yield ' · '
    yield escape(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'run_id'))
    yield '</a> ('
    yield escape(t_5(environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'created_at')))
    yield ')</p>\n<h2>Deltas (B - A)</h2>\n<p class="meta">Items pair by subject, task and item id; an item not scored in either run is dropped from its row and counted. Paired randomization test, Holm-corrected across rows: * p &lt; 0.05, ** p &lt; 0.01.</p>\n'
    if environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'rows'):
        pass
        yield '<div class="scroll"><table id="deltas"><thead><tr><th>subject</th><th>task</th><th>evaluator</th><th class="num">A</th><th class="num">B</th><th class="num">Δ</th><th>Δ 95% CI</th><th class="num">p</th><th class="num">p Holm</th><th></th><th class="num">n</th><th class="num">dropped</th></tr></thead><tbody>\n'
        for l_1_r in environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'rows'):
            l_1_ci = resolve('ci')
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_r, 'subject'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'task'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'evaluator'))
            yield '</td><td class="num">'
            yield escape(t_2(environment.getattr(l_1_r, 'mean_a')))
            yield '</td><td class="num">'
            yield escape(t_2(environment.getattr(l_1_r, 'mean_b')))
            yield '</td>\n<td class="num '
            yield escape(('up' if (environment.getattr(l_1_r, 'mark') and (environment.getattr(l_1_r, 'delta') > 0)) else ('down' if (environment.getattr(l_1_r, 'mark') and (environment.getattr(l_1_r, 'delta') < 0)) else '')))
            yield '">'
            yield escape(t_4(environment.getattr(l_1_r, 'delta')))
            yield '</td><td class="num">'
            yield escape(context.call((undefined(name='ci') if l_1_ci is missing else l_1_ci), environment.getattr(l_1_r, 'delta_ci_low'), environment.getattr(l_1_r, 'delta_ci_high'), _loop_vars=_loop_vars))
            yield '</td><td class="num">'
            yield escape(t_3(environment.getattr(l_1_r, 'p_value')))
            yield '</td><td class="num">'
            yield escape(t_3(environment.getattr(l_1_r, 'p_holm')))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'mark'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'n'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_r, 'n_dropped'))
            yield '</td></tr>'
        l_1_r = l_1_ci = missing
        yield '</tbody></table></div>'
    else:
        pass
        yield '<p class="meta">No evaluator scored items in both runs.</p>'
    yield '<h2>Verdicts that changed</h2>\n<p class="meta">'
    yield escape(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'n_changed'))
    yield ' verdict(s) differ'
    if (environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'n_changed') > t_1(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'changed'))):
        pass
        yield '; the first '
        yield escape(t_1(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'changed')))
        yield ' are listed (regressions first)'
    yield '. <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'run_id'), '/items', )), show='changed', baseline=environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'run_id'), _block_vars=_block_vars))
    yield '">All changed items of B</a> · <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'run_id'), '/items', )), show='regressed', baseline=environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'a'), 'run_id'), _block_vars=_block_vars))
    yield '">regressed</a></p>\n'
    if environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'changed'):
        pass
        yield '<div class="scroll"><table id="changed"><thead><tr><th>item</th><th>subject</th><th>task</th><th>evaluator</th><th>A</th><th>B</th></tr></thead><tbody>\n'
        for l_1_v in environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'changed'):
            _loop_vars = {}
            pass
            yield '<tr'
            if environment.getattr(l_1_v, 'regressed'):
                pass
                yield ' class="bad"'
            yield '><td><a href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'b'), 'run_id'), '/item', )), subject=environment.getattr(l_1_v, 'subject'), task=environment.getattr(l_1_v, 'task'), item=environment.getattr(l_1_v, 'item_id'), _loop_vars=_loop_vars))
            yield '">'
            yield escape(environment.getattr(l_1_v, 'item_id'))
            yield '</a></td><td>'
            yield escape(environment.getattr(l_1_v, 'subject'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_v, 'task'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_v, 'evaluator'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_v, 'a'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_v, 'b'))
            if environment.getattr(l_1_v, 'regressed'):
                pass
                yield ' ▼'
            yield '</td></tr>'
        l_1_v = missing
        yield '</tbody></table></div>'
    yield '<h2>What changed in the specs</h2>\n'
    for (l_1_title, l_1_changes) in [('Subjects', environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'subject_changes')), ('Tasks', environment.getattr((undefined(name='c') if l_0_c is missing else l_0_c), 'task_changes'))]:
        _loop_vars = {}
        pass
        yield '<h3>'
        yield escape(l_1_title)
        yield '</h3>\n'
        if l_1_changes:
            pass
            yield '<div class="scroll"><table class="spec-changes"><thead><tr><th>setting</th><th>A</th><th>B</th></tr></thead><tbody>\n'
            for l_2_ch in l_1_changes:
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.getattr(l_2_ch, 'where'))
                yield '</td>'
                if environment.getattr(l_2_ch, 'diff'):
                    pass
                    yield '<td colspan="2"><pre class="diff">'
                    for l_3_line in environment.getattr(l_2_ch, 'diff'):
                        _loop_vars = {}
                        pass
                        yield '<span class="'
                        yield escape(('add' if context.call(environment.getattr(l_3_line, 'startswith'), '+', _loop_vars=_loop_vars) else ('del' if context.call(environment.getattr(l_3_line, 'startswith'), '-', _loop_vars=_loop_vars) else '')))
                        yield '">'
                        yield escape(l_3_line)
                        yield '</span>\n'
                    l_3_line = missing
                    yield '</pre></td>'
                else:
                    pass
                    yield '<td>'
                    yield escape((environment.getattr(l_2_ch, 'a') if (not t_6(environment.getattr(l_2_ch, 'a'))) else '(absent)'))
                    yield '</td><td>'
                    yield escape((environment.getattr(l_2_ch, 'b') if (not t_6(environment.getattr(l_2_ch, 'b'))) else '(absent)'))
                    yield '</td>'
                yield '</tr>'
            l_2_ch = missing
            yield '</tbody></table></div>'
        else:
            pass
            yield '<p class="meta">No change.</p>'
    l_1_title = l_1_changes = missing

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=27&5=74&6=82&9=90&10=93&11=108&14=130&15=142&16=145&19=173&20=179&21=182&22=204'
