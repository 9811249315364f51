from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'watch.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'watch.html')
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
    yield 'Watches'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_store = resolve('store')
    l_0_entries = resolve('entries')
    try:
        t_1 = environment.filters['brief']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'brief' found.")
    try:
        t_2 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_3 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_4 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_5 = environment.filters['pct']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'pct' found.")
    try:
        t_6 = environment.filters['reverse']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'reverse' found.")
    try:
        t_7 = environment.tests['iterable']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No test named 'iterable' found.")
    try:
        t_8 = environment.tests['number']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No test named 'number' found.")
    pass
    yield '<h1>Watches</h1>\n<p class="meta">Continuous online evaluation of the query log by <code>memgauge watch</code>, read from its state files: those under MEMGAUGE_HOME/watch of this store ('
    yield escape((undefined(name='store') if l_0_store is missing else l_0_store))
    yield '), and those given with <code>memgauge view --watch-state FILE</code>. Read-only.</p>\n<div class="scroll"><table class="watches" id="watch-list"><thead><tr><th>state file</th><th>filters</th><th>sample rate</th><th>measures</th><th>cursor (row)</th><th>passes</th><th>last pass (UTC)</th><th>alerts fired</th><th>delivered</th><th>undelivered</th><th>webhook failures</th></tr></thead><tbody>\n'
    l_1_loop = missing
    t_9 = 1
    for l_1_e, l_1_loop in LoopContext((undefined(name='entries') if l_0_entries is missing else l_0_entries), undefined):
        l_1_s = resolve('s')
        _loop_vars = {}
        pass
        if environment.getattr(l_1_e, 'error'):
            pass
            yield '<tr class="watch-error"><td>'
            yield escape(environment.getattr(l_1_e, 'path'))
            yield '</td><td colspan="10"><span class="warn">not readable as a watch state: '
            yield escape(environment.getattr(l_1_e, 'error'))
            yield '</span></td></tr>\n'
        else:
            pass
            l_1_s = environment.getattr(l_1_e, 'state')
            _loop_vars['s'] = l_1_s
            yield '<tr><td><a href="#watch-'
            yield escape(environment.getattr(l_1_loop, 'index'))
            yield '">'
            yield escape(environment.getattr(l_1_e, 'path'))
            yield '</a></td><td>'
            t_10 = 1
            for (l_2_k, l_2_v) in environment.getattr(l_1_e, 'filters'):
                _loop_vars = {}
                pass
                yield '<span class="chip">'
                yield escape(l_2_k)
                yield ': '
                yield escape(l_2_v)
                yield '</span> '
                t_10 = 0
            l_2_k = l_2_v = missing
            if t_10:
                pass
                yield 'all searches'
            yield '</td><td>'
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'config'), 'rate'))
            yield '</td><td>'
            yield escape(t_2(context.eval_ctx, (environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'config'), 'measures') or []), ', '))
            yield '</td><td>'
            yield escape(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'cursor'))
            yield '</td><td>'
            yield escape(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'passes'))
            yield '</td><td>'
            yield escape((environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'last_pass') or 'n/a'))
            yield '</td><td>'
            yield escape(t_3(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'fired')))
            yield '</td><td>'
            yield escape(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'alerts_sent'))
            yield '</td><td>'
            yield escape(t_3(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'pending')))
            yield '</td><td>'
            yield escape(t_3(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'failures')))
            yield '</td></tr>\n'
        t_9 = 0
    l_1_loop = l_1_e = l_1_s = missing
    if t_9:
        pass
        yield '<tr><td colspan="11" class="meta">No watch of this store: run <code>memgauge watch STORE</code>, or give a state file with <code>--watch-state</code>.</td></tr>'
    yield '</tbody></table></div>\n'
    l_1_loop = missing
    for l_1_e, l_1_loop in LoopContext((undefined(name='entries') if l_0_entries is missing else l_0_entries), undefined):
        l_1_s = resolve('s')
        _loop_vars = {}
        pass
        if (not environment.getattr(l_1_e, 'error')):
            pass
            l_1_s = environment.getattr(l_1_e, 'state')
            _loop_vars['s'] = l_1_s
            yield '<section class="watch" id="watch-'
            yield escape(environment.getattr(l_1_loop, 'index'))
            yield '">\n<h2>'
            yield escape(environment.getattr(environment.getattr(l_1_e, 'path'), 'name'))
            yield '</h2>\n<p class="meta">'
            yield escape(environment.getattr(l_1_e, 'path'))
            yield ' · store '
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'config'), 'store'))
            yield ' · filters: '
            l_2_loop = missing
            t_11 = 1
            for (l_2_k, l_2_v), l_2_loop in LoopContext(environment.getattr(l_1_e, 'filters'), undefined):
                _loop_vars = {}
                pass
                yield escape(l_2_k)
                yield ' '
                yield escape(l_2_v)
                yield escape(('; ' if (not environment.getattr(l_2_loop, 'last')) else cond_expr_undefined("the inline if-expression on line 14 in 'watch.html' evaluated to false and no else section was defined.")))
                t_11 = 0
            l_2_loop = l_2_k = l_2_v = missing
            if t_11:
                pass
                yield 'none'
            yield ' · sample rate '
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'config'), 'rate'))
            yield ' · cursor at row '
            yield escape(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'cursor'))
            yield ' · '
            yield escape(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'passes'))
            yield ' pass(es), the last '
            yield escape((environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'last_pass') or 'n/a'))
            yield '</p>\n<p class="rule">'
            if environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'):
                pass
                yield "rule: the gate's, a drop of "
                yield escape((t_5(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'threshold')) if t_8(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'threshold')) else environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'threshold')))
                yield ' or more against the mean of the last '
                yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'window'))
                yield ' window(s) that did not fire (by '
                yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'by'))
                yield '); a measure over fewer than '
                yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'rule'), 'min_samples'))
                yield ' searches is shown, not decided'
            else:
                pass
                yield "rule: not recorded (a state written before the viewer's page)"
            yield '</p>\n'
            for l_2_m in environment.getattr(l_1_e, 'measures'):
                _loop_vars = {}
                pass
                yield '<h3>'
                yield escape(environment.getattr(l_2_m, 'name'))
                yield '</h3>\n'
                if environment.getattr(l_2_m, 'rows'):
                    pass
                    yield '<div class="chart">'
                    yield escape(environment.getattr(l_2_m, 'chart'))
                    yield '</div>\n<div class="scroll"><table class="watch-windows"><thead><tr><th>pass (UTC)</th><th>rows</th><th>value</th><th>95% CI</th><th>n</th><th>fired</th><th>note</th></tr></thead><tbody>\n'
                    for l_3_r in environment.getattr(l_2_m, 'rows'):
                        l_3_ci = resolve('ci')
                        _loop_vars = {}
                        pass
                        yield '<tr><td>'
                        yield escape(environment.getattr(l_3_r, 'at'))
                        yield '</td><td>'
                        yield escape(environment.getattr(l_3_r, 'rows'))
                        yield '</td><td>'
                        yield escape(t_4(environment.getattr(l_3_r, 'value')))
                        yield '</td><td>'
                        yield escape(context.call((undefined(name='ci') if l_3_ci is missing else l_3_ci), environment.getattr(l_3_r, 'ci_low'), environment.getattr(l_3_r, 'ci_high'), _loop_vars=_loop_vars))
                        yield '</td><td>'
                        yield escape(environment.getattr(l_3_r, 'n'))
                        yield '</td><td>'
                        if environment.getattr(l_3_r, 'fired'):
                            pass
                            yield '<span class="warn">fired</span>'
                        yield '</td><td>'
                        yield escape((environment.getattr(l_3_r, 'note') or ''))
                        yield '</td></tr>\n'
                    l_3_r = l_3_ci = missing
                    yield '</tbody></table></div>\n'
                else:
                    pass
                    yield '<p class="meta">No window recorded yet.</p>'
            l_2_m = missing
            yield '<h3>Alerts fired</h3>\n'
            if environment.getattr(l_1_e, 'fired'):
                pass
                yield '<div class="scroll"><table class="watch-fired"><thead><tr><th>at (UTC)</th><th>measure</th><th>value</th><th>baseline</th><th>drop</th><th>note</th></tr></thead><tbody>\n'
                for l_2_a in environment.getattr(l_1_e, 'fired'):
                    _loop_vars = {}
                    pass
                    yield '<tr><td>'
                    yield escape(environment.getattr(l_2_a, 'at'))
                    yield '</td><td>'
                    yield escape(environment.getattr(l_2_a, 'measure'))
                    yield '</td><td>'
                    yield escape(t_4(environment.getattr(l_2_a, 'value')))
                    yield '</td><td>'
                    yield escape(t_4(environment.getattr(l_2_a, 'baseline')))
                    yield '</td><td>'
                    yield escape(t_5(environment.getattr(l_2_a, 'drop')))
                    yield '</td><td>'
                    yield escape((environment.getattr(l_2_a, 'note') or ''))
                    yield '</td></tr>\n'
                l_2_a = missing
                yield '</tbody></table></div>'
            else:
                pass
                yield '<p class="meta">None.</p>'
            yield '<h3>Alerts not delivered</h3>\n'
            if environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'pending'):
                pass
                yield '<div class="scroll"><table class="watch-pending"><thead><tr><th>measure</th><th>value</th><th>baseline</th><th>window</th><th>examples</th></tr></thead><tbody>\n'
                for l_2_a in environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'pending'):
                    _loop_vars = {}
                    pass
                    yield '<tr><td>'
                    yield escape(environment.getattr(l_2_a, 'measure'))
                    yield '</td><td>'
                    yield escape((t_4(environment.getattr(l_2_a, 'value')) if t_8(environment.getattr(l_2_a, 'value')) else environment.getattr(l_2_a, 'value')))
                    yield '</td><td>'
                    yield escape((t_4(environment.getattr(l_2_a, 'baseline')) if t_8(environment.getattr(l_2_a, 'baseline')) else environment.getattr(l_2_a, 'baseline')))
                    yield '</td><td>'
                    yield escape((t_2(context.eval_ctx, environment.getattr(environment.getattr(l_2_a, 'window'), 'rows'), '-') if (environment.getattr(l_2_a, 'window') and t_7(environment.getattr(environment.getattr(l_2_a, 'window'), 'rows'))) else ''))
                    yield '</td><td>'
                    yield escape((t_2(context.eval_ctx, (environment.getattr(l_2_a, 'examples') or []), ', ') if t_7(environment.getattr(l_2_a, 'examples')) else ''))
                    yield '</td></tr>\n'
                l_2_a = missing
                yield '</tbody></table></div>'
            else:
                pass
                yield '<p class="meta">None: every alert fired was delivered (or no webhook is set).</p>'
            yield '<h3>Webhook failures</h3>\n'
            if environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'failures'):
                pass
                yield '<div class="scroll"><table class="watch-failures"><thead><tr><th>at (UTC)</th><th>webhook</th><th>measure</th><th>attempts</th><th>error</th></tr></thead><tbody>\n'
                for l_2_f in t_6(environment.getattr((undefined(name='s') if l_1_s is missing else l_1_s), 'failures')):
                    _loop_vars = {}
                    pass
                    yield '<tr><td>'
                    yield escape(environment.getattr(l_2_f, 'at'))
                    yield '</td><td>'
                    yield escape(environment.getattr(l_2_f, 'webhook'))
                    yield '</td><td>'
                    yield escape(environment.getattr(l_2_f, 'measure'))
                    yield '</td><td>'
                    yield escape(environment.getattr(l_2_f, 'attempts'))
                    yield '</td><td>'
                    yield escape(t_1(environment.getattr(l_2_f, 'error'), 200))
                    yield '</td></tr>\n'
                l_2_f = missing
                yield '</tbody></table></div>'
            else:
                pass
                yield '<p class="meta">None.</p>'
            yield '</section>\n'
    l_1_loop = l_1_e = l_1_s = missing

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=27&5=86&7=90&8=103&11=150&12=159&13=161&14=163&15=190&16=205&17=211&19=216&24=244&25=247&28=269&29=272&32=292&33=295'
