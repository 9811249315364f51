from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'optimization.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_status = missing
    pass
    parent_template = environment.get_template('base.html', 'optimization.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'optimization.html')._get_default_module(context)
    l_0_status = getattr(included_template, 'status', missing)
    if l_0_status is missing:
        l_0_status = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'optimization.html') does not export the requested name 'status'", name='status')
    context.vars['status'] = l_0_status
    context.exported_vars.discard('status')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_o = resolve('o')
    pass
    yield 'Optimization '
    yield escape(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'study'), 'id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_o = resolve('o')
    l_0_status = resolve('status')
    l_0_url = resolve('url')
    l_0_ci = resolve('ci')
    l_0_s = missing
    try:
        t_1 = environment.filters['brief']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'brief' found.")
    try:
        t_2 = environment.filters['dictsort']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'dictsort' found.")
    try:
        t_3 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_4 = environment.filters['pretty']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'pretty' found.")
    try:
        t_5 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_6 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    try:
        t_7 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_8 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_s = environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'study')
    _block_vars['s'] = l_0_s
    yield '<h1>Optimization <span class="meta">'
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'id'))
    yield '</span></h1>\n<p class="meta" id="study-status">'
    yield escape(context.call((undefined(name='status') if l_0_status is missing else l_0_status), environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'status'), _block_vars=_block_vars))
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'stopped_because'):
        pass
        yield ' stopped because: '
        yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'stopped_because'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'strategy'))
    yield ' · objective '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'objective'))
    yield ' · subject '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'subject'))
    yield ' · suite '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'suite'))
    if environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'row'), 'created_at'):
        pass
        yield ' · started '
        yield escape(t_6(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'row'), 'created_at')))
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'split'):
        pass
        yield '<br>split: '
        yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'split'))
    yield '</p>\n'
    for l_1_n in environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'notices'):
        _loop_vars = {}
        pass
        yield '<p class="meta">'
        yield escape(l_1_n)
        yield '</p>'
    l_1_n = missing
    yield '<h2>Score per iteration</h2>\n<div id="score-chart">'
    yield escape(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'chart'))
    yield '</div>\n<h2>Held-out split</h2>\n'
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'):
        pass
        yield '<div id="holdout">'
        yield escape(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'holdout_chart'))
        yield '\n<div class="scroll"><table><thead><tr><th></th><th class="num">score</th><th>run</th></tr></thead><tbody>\n<tr><td>baseline (step 0)</td><td class="num">'
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'baseline')))
        yield '</td><td>'
        if environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'baseline_run_id'):
            pass
            yield '<a href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'baseline_run_id'), )), _block_vars=_block_vars))
            yield '">'
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'baseline_run_id'))
            yield '</a>'
        yield '</td></tr>\n<tr><td>best</td><td class="num">'
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'best')))
        yield '</td><td>'
        if environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'best_run_id'):
            pass
            yield '<a href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'best_run_id'), )), _block_vars=_block_vars))
            yield '">'
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'best_run_id'))
            yield '</a>'
        yield '</td></tr>\n<tr><td>paired Δ (best - baseline), '
        yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'n'))
        yield ' items</td><td class="num">'
        yield escape(t_5(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'delta')))
        yield '</td><td>95% CI '
        yield escape((context.call((undefined(name='ci') if l_0_ci is missing else l_0_ci), environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'ci_low'), environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'holdout'), 'ci_high'), _block_vars=_block_vars) or 'n/a'))
        yield '</td></tr>\n</tbody></table></div></div>\n'
    else:
        pass
        yield '<p class="meta">No held-out comparison'
        if (environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'status') == 'running'):
            pass
            yield ' yet'
        else:
            pass
            yield ' (nothing held out)'
        yield '.</p>'
    yield '<h2>Current best</h2>\n'
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'):
        pass
        yield '<div id="best"><p>Iteration '
        yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'step'))
        if environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'candidate'):
            pass
            yield '.'
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'candidate'))
        yield ': <b>'
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'score')))
        yield '</b> <span class="meta">'
        yield escape(context.call((undefined(name='ci') if l_0_ci is missing else l_0_ci), environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'ci_low'), environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'ci_high'), _block_vars=_block_vars))
        yield '</span>'
        if environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'run_id'):
            pass
            yield ' · run <a href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'run_id'), )), _block_vars=_block_vars))
            yield '">'
            yield escape(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'run_id'))
            yield '</a>'
        if (environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'step') == 0):
            pass
            yield ' <span class="meta">(the starting configuration: nothing cleared the threshold against it)</span>'
        yield '</p>\n'
        if environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'params'):
            pass
            yield '<div class="scroll"><table><thead><tr><th>param</th><th>value</th></tr></thead><tbody>'
            for (l_1_k, l_1_v) in t_2(environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'params')):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(l_1_k)
                yield '</td><td>'
                yield escape(t_4(l_1_v))
                yield '</td></tr>'
            l_1_k = l_1_v = missing
            yield '</tbody></table></div>'
        for (l_1_k, l_1_v) in t_2((environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'texts') or {})):
            _loop_vars = {}
            pass
            yield '<details><summary>text '
            yield escape(l_1_k)
            yield '</summary><pre>'
            yield escape(l_1_v)
            yield '</pre></details>'
        l_1_k = l_1_v = missing
        yield '</div>\n'
    else:
        pass
        yield '<p class="meta">None yet.</p>'
    yield '<h2>Iterations</h2>\n<div class="scroll"><table id="iterations"><thead><tr><th>iteration</th><th>target</th><th>status</th><th>params</th><th class="num">score</th><th>95% CI</th><th class="num">Δ vs best</th><th>Δ CI</th><th>accepted</th><th>run</th><th>note</th></tr></thead><tbody>\n'
    l_1_loop = missing
    for l_1_r, l_1_loop in LoopContext(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'iterations'), undefined):
        _loop_vars = {}
        pass
        yield '<tr'
        if ((environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best') and (environment.getattr(l_1_r, 'step') == environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'step'))) and (environment.getattr(l_1_r, 'candidate') == environment.getattr(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'best'), 'candidate'))):
            pass
            yield ' class="relevant"'
        elif (environment.getattr(l_1_r, 'status') == 'failed'):
            pass
            yield ' class="bad"'
        yield '><td>'
        yield escape(environment.getitem(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'labels'), environment.getattr(l_1_loop, 'index0')))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_r, 'target'))
        yield '</td><td>'
        yield escape(context.call((undefined(name='status') if l_0_status is missing else l_0_status), environment.getattr(l_1_r, 'status'), _loop_vars=_loop_vars))
        yield '</td><td>'
        l_2_loop = missing
        for (l_2_k, l_2_v), l_2_loop in LoopContext(t_2(environment.getattr(l_1_r, 'params')), undefined):
            _loop_vars = {}
            pass
            yield escape(l_2_k)
            yield '='
            yield escape(t_1(l_2_v, 60))
            if (not environment.getattr(l_2_loop, 'last')):
                pass
                yield ', '
        l_2_loop = l_2_k = l_2_v = missing
        yield '</td><td class="num">'
        yield escape(t_3(environment.getattr(l_1_r, 'score')))
        yield '</td><td class="num">'
        yield escape(context.call((undefined(name='ci') if l_0_ci is missing else l_0_ci), environment.getattr(l_1_r, 'ci_low'), environment.getattr(l_1_r, 'ci_high'), _loop_vars=_loop_vars))
        yield '</td><td class="num">'
        yield escape(t_5(environment.getattr(l_1_r, 'delta')))
        yield '</td><td class="num">'
        yield escape(context.call((undefined(name='ci') if l_0_ci is missing else l_0_ci), environment.getattr(l_1_r, 'delta_ci_low'), environment.getattr(l_1_r, 'delta_ci_high'), _loop_vars=_loop_vars))
        yield '</td><td>'
        yield escape(('-' if t_8(environment.getattr(l_1_r, 'accepted')) else ('yes' if environment.getattr(l_1_r, 'accepted') else 'no')))
        yield '</td><td>'
        if environment.getattr(l_1_r, 'run_id'):
            pass
            yield '<a class="run-link" href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr(l_1_r, 'run_id'), )), _loop_vars=_loop_vars))
            yield '">'
            yield escape(environment.getattr(l_1_r, 'run_id'))
            yield '</a>'
        yield '</td><td>'
        yield escape((environment.getattr(l_1_r, 'note') or ''))
        if environment.getattr(l_1_r, 'reason'):
            pass
            yield ' <span class="meta">'
            yield escape(t_1(environment.getattr(l_1_r, 'reason'), 120))
            yield '</span>'
        yield '</td></tr>'
    l_1_loop = l_1_r = missing
    yield '</tbody></table></div>\n<h2>What changed between two iterations</h2>\n<form id="diff-form" method="get" action="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/optimizations/', environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'id'), )), _block_vars=_block_vars))
    yield '">\n<label>A <select name="a">'
    for l_1_l in environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'labels'):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_l)
        yield '"'
        if (l_1_l == environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'a')):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_l)
        yield '</option>'
    l_1_l = missing
    yield '</select></label>\n<label>B <select name="b">'
    for l_1_l in environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'labels'):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_l)
        yield '"'
        if (l_1_l == environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'b')):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_l)
        yield '</option>'
    l_1_l = missing
    yield '</select></label>\n<button type="submit">diff</button></form>\n'
    if environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'):
        pass
        yield '<div id="diff">\n<p class="meta">From iteration '
        yield escape(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'a'))
        yield ' (score '
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'score_a')))
        yield ') to '
        yield escape(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'b'))
        yield ' (score '
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'score_b')))
        yield ').</p>\n'
        if environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'params'):
            pass
            yield '<div class="scroll"><table id="diff-params"><thead><tr><th>param</th><th>A ('
            yield escape(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'a'))
            yield ')</th><th>B ('
            yield escape(environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'b'))
            yield ')</th></tr></thead><tbody>\n'
            for l_1_p in environment.getattr(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'diff'), 'params'):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.getattr(l_1_p, 'field'))
                yield '</td><td>'
                yield escape(('(absent)' if t_8(environment.getattr(l_1_p, 'a')) else t_4(environment.getattr(l_1_p, 'a'))))
                yield '</td><td>'
                yield escape(('(absent)' if t_8(environment.getattr(l_1_p, 'b')) else t_4(environment.getattr(l_1_p, 'b'))))
                yield '</td></tr>'
            l_1_p = missing
            yield '</tbody></table></div>'
        else:
            pass
            yield '<p class="meta">No param differs.</p>'
        t_9 = 1
        for (l_1_name, l_1_lines) in t_2(environment.getattr((undefined(name='o') if l_0_o is missing else l_0_o), 'text_diffs')):
            _loop_vars = {}
            pass
            yield '<h3>text '
            yield escape(l_1_name)
            yield '</h3><pre class="diff text-diff">'
            for l_2_line in l_1_lines:
                _loop_vars = {}
                pass
                yield '<span class="'
                yield escape(('add' if (context.call(environment.getattr(l_2_line, 'startswith'), '+', _loop_vars=_loop_vars) and (not context.call(environment.getattr(l_2_line, 'startswith'), '+++', _loop_vars=_loop_vars))) else ('del' if (context.call(environment.getattr(l_2_line, 'startswith'), '-', _loop_vars=_loop_vars) and (not context.call(environment.getattr(l_2_line, 'startswith'), '---', _loop_vars=_loop_vars))) else '')))
                yield '">'
                yield escape(l_2_line)
                yield '</span>\n'
            l_2_line = missing
            yield '</pre>'
            t_9 = 0
        l_1_name = l_1_lines = missing
        if t_9:
            pass
            if (environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'iterations') and t_7(environment.getattr(environment.getitem(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'iterations'), 0), 'texts'))):
                pass
                yield '<p class="meta">No text differs.</p>'
        yield '</div>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&2=16&3=24&4=36&5=97&6=100&7=102&8=124&10=132&12=134&14=139&15=149&16=159&18=168&20=176&21=200&22=213&26=228&29=284&30=286&31=300&33=314&34=317&35=325&36=332&38=348&39=368'
