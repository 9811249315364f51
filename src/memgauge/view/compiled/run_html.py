from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'run.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_m = missing
    pass
    parent_template = environment.get_template('base.html', 'run.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    l_0_m = context.vars['m'] = environment.get_template('_macros.html', 'run.html')._get_default_module(context)
    context.exported_vars.discard('m')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_p = resolve('p')
    pass
    yield 'Run '
    yield escape(environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'run'), 'run_id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_p = resolve('p')
    l_0_m = resolve('m')
    l_0_duration = resolve('duration')
    l_0_standalone = resolve('standalone')
    l_0_url = resolve('url')
    l_0_regressed = resolve('regressed')
    l_0_run = l_0_s = missing
    try:
        t_1 = environment.filters['format']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'format' found.")
    try:
        t_2 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_3 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_4 = environment.filters['pct']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'pct' found.")
    try:
        t_5 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_6 = environment.filters['tojson']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'tojson' found.")
    try:
        t_7 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    try:
        t_8 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_run = environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'run')
    _block_vars['run'] = l_0_run
    l_0_s = environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'summary')
    _block_vars['s'] = l_0_s
    yield '<h1>'
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_name'))
    yield ' <span class="meta">run '
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'))
    yield '</span></h1>\n<p class="meta" id="run-status">'
    yield escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'status'), environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'status'), _block_vars=_block_vars))
    yield ' · '
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'kind'))
    yield ' ·\n'
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_completed'))
    yield ' completed'
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_unscored'):
        pass
        yield ' ('
        yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_unscored'))
        yield ' not scored: an evaluator failed)'
    yield ', '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_failed'))
    yield ' failed, '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_queued'))
    yield ' to do, of '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'n_items'))
    yield ' items\n· created '
    yield escape(t_7(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'created_at')))
    if environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'finished_at'):
        pass
        yield ' · took '
        yield escape((undefined(name='duration') if l_0_duration is missing else l_0_duration))
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'live'):
        pass
        yield ' · <b>live</b>: refreshes every 2 s'
    yield '</p>\n'
    if environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'reason'):
        pass
        yield '<p class="warn">'
        yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'reason'))
        yield '</p>'
    if (not (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone)):
        pass
        yield '<p><a href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), '/items', )), _block_vars=_block_vars))
        yield '">items</a> ·\n<a href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), '/items', )), show='failures', _block_vars=_block_vars))
        yield '">failures</a> ·\n<a href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/trends', suite=environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_name'), _block_vars=_block_vars))
        yield '">trend of '
        yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_name'))
        yield '</a></p>\n'
        if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'others'):
            pass
            yield '<form class="filters" method="get" action="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/compare', _block_vars=_block_vars))
            yield '">\n<input type="hidden" name="b" value="'
            yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'))
            yield '">\n<label>compare with an earlier run<select name="a">'
            for l_1_o in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'others'):
                _loop_vars = {}
                pass
                yield '<option value="'
                yield escape(environment.getattr(l_1_o, 'run_id'))
                yield '">'
                yield escape(environment.getattr(l_1_o, 'run_id'))
                yield ' ('
                yield escape(environment.getattr(l_1_o, 'status'))
                yield ')</option>'
            l_1_o = missing
            yield '</select></label>\n<button type="submit">compare</button></form>'
        else:
            pass
            yield '<p class="meta">No earlier run of '
            yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_name'))
            yield " to compare with: a later run's page compares with this one.</p>"
    yield '\n<h2>Results</h2>\n<p class="meta">Mean with its 95% CI, pass rate, n scored / n failed, per subject; a value that could not be computed is n/a with its count, never 0.</p>\n'
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'grid'):
        pass
        yield '<div class="scroll"><table id="grid">\n<thead><tr><th>task</th><th>evaluator / measure</th>'
        for l_1_subj in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'subjects'):
            _loop_vars = {}
            pass
            yield '<th>'
            yield escape(l_1_subj)
            yield '</th>'
        l_1_subj = missing
        yield '</tr></thead>\n<tbody>'
        for l_1_r in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'grid'):
            l_1_agent_definition = resolve('agent_definition')
            l_1_d = missing
            _loop_vars = {}
            pass
            yield '<tr>\n<td>'
            yield escape(environment.getattr(l_1_r, 'task'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'evaluator'))
            if (environment.getattr(l_1_r, 'source') != 'evaluator'):
                pass
                yield ' <span class="meta">('
                yield escape(environment.getattr(l_1_r, 'source'))
                yield ')</span>'
            l_1_d = (context.call((undefined(name='agent_definition') if l_1_agent_definition is missing else l_1_agent_definition), environment.getattr(l_1_r, 'evaluator'), _loop_vars=_loop_vars) if (environment.getattr(l_1_r, 'source') == 'ir') else None)
            _loop_vars['d'] = l_1_d
            if (undefined(name='d') if l_1_d is missing else l_1_d):
                pass
                yield '<div class="meta definition">'
                yield escape((undefined(name='d') if l_1_d is missing else l_1_d))
                yield '</div>'
            yield '</td>\n'
            for l_2_subj in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'subjects'):
                l_2_c = missing
                _loop_vars = {}
                pass
                l_2_c = context.call(environment.getattr(environment.getattr(l_1_r, 'cells'), 'get'), l_2_subj, _loop_vars=_loop_vars)
                _loop_vars['c'] = l_2_c
                yield '<td>'
                if (undefined(name='c') if l_2_c is missing else l_2_c):
                    pass
                    yield escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'ci_cell'), environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'mean'), environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'ci_low'), environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'ci_high'), environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_scored'), environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_failed'), _loop_vars=_loop_vars))
                    yield '\n<div class="meta">'
                    if (not t_8(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'pass_rate'))):
                        pass
                        yield 'pass '
                        yield escape(t_4(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'pass_rate')))
                        yield ' · '
                    yield 'n '
                    yield escape(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_scored'))
                    if environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_fallback'):
                        pass
                        yield ' · <span class="warn">'
                        yield escape(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_fallback'))
                        yield ' fallback'
                        yield escape(('' if (environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_fallback') == 1) else 's'))
                        yield ' (neutral 0.5)</span>'
                    if environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_failed'):
                        pass
                        yield ' · <span class="bad">'
                        yield escape(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'n_failed'))
                        yield ' failed</span>'
                    yield '</div>'
                    if (t_8(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'mean')) and environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'note')):
                        pass
                        yield '<div class="meta why-na">'
                        yield escape(environment.getattr((undefined(name='c') if l_2_c is missing else l_2_c), 'note'))
                        yield '</div>'
                else:
                    pass
                    yield '<span class="na">-</span>'
                yield '</td>'
            l_2_subj = l_2_c = missing
            yield '</tr>'
        l_1_r = l_1_agent_definition = l_1_d = missing
        yield '</tbody></table></div>\n'
        if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'conventions'):
            pass
            yield '<p class="meta" id="conventions">'
            l_1_loop = missing
            for l_1_line, l_1_loop in LoopContext(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'conventions'), undefined):
                _loop_vars = {}
                pass
                yield '<span class="conventions">'
                yield escape(l_1_line)
                yield '</span>'
                if (not environment.getattr(l_1_loop, 'last')):
                    pass
                    yield '<br>'
            l_1_loop = l_1_line = missing
            yield '</p>'
    else:
        pass
        yield '<p class="meta">Nothing scored yet.</p>'
    for l_1_chart in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'charts'):
        _loop_vars = {}
        pass
        yield escape(l_1_chart)
    l_1_chart = missing
    yield '\n'
    if environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'targets'):
        pass
        yield '<h2>Targets</h2><div class="scroll"><table id="targets">\n<thead><tr><th>subject</th><th>task</th><th>measure</th><th>target</th><th>value</th><th>met</th><th>set by</th></tr></thead>\n<tbody>'
        for l_1_t in environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'targets'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_t, 'subject'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'task'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'measure'))
            yield '</td>\n<td>'
            yield escape(environment.getattr(l_1_t, 'op'))
            yield ' '
            yield escape(t_3(environment.getattr(l_1_t, 'target')))
            if (environment.getattr(l_1_t, 'by') != 'point'):
                pass
                yield ' ('
                yield escape(environment.getattr(l_1_t, 'by'))
                yield ')'
            yield '</td><td class="num">'
            yield escape(t_3(environment.getattr(l_1_t, 'value')))
            yield '</td>\n<td class="'
            yield escape(('ok' if environment.getattr(l_1_t, 'met') else ('bad' if (environment.getattr(l_1_t, 'met') == False) else 'na')))
            yield '">'
            yield escape(('met' if environment.getattr(l_1_t, 'met') else ('missed' if (environment.getattr(l_1_t, 'met') == False) else 'n/a')))
            if (not environment.getattr(l_1_t, 'enforced')):
                pass
                yield ' (shown, not enforced)'
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'source'))
            yield '</td></tr>'
        l_1_t = missing
        yield '</tbody></table></div>'
    yield '\n'
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'):
        pass
        yield '<h2>Gate</h2>\n<p id="gate">Status <b class="'
        yield escape(environment.getitem({'pass': 'ok', 'warn': 'warn', 'fail': 'bad'}, environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'), 'status')))
        yield '">'
        yield escape(environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'), 'status'))
        yield '</b>, phase '
        yield escape(environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'), 'phase'))
        yield ', against the rolling baseline of '
        yield escape(environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'), 'n_history'))
        yield ' earlier completed run(s) of this suite.</p>\n'
        l_0_regressed = t_2(context.eval_ctx, t_5(context, environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'gate'), 'checks'), 'regressed'))
        _block_vars['regressed'] = l_0_regressed
        if (undefined(name='regressed') if l_0_regressed is missing else l_0_regressed):
            pass
            yield '<div class="scroll"><table><thead><tr><th>subject</th><th>task</th><th>measure</th><th>current</th><th>baseline</th><th>note</th></tr></thead><tbody>\n'
            for l_1_c in (undefined(name='regressed') if l_0_regressed is missing else l_0_regressed):
                _loop_vars = {}
                pass
                yield '<tr><td>'
                yield escape(environment.getattr(l_1_c, 'subject'))
                yield '</td><td>'
                yield escape(environment.getattr(l_1_c, 'task'))
                yield '</td><td>'
                yield escape(environment.getattr(l_1_c, 'evaluator'))
                yield '</td><td class="num">'
                yield escape(t_3(environment.getattr(l_1_c, 'current')))
                yield '</td><td class="num">'
                yield escape(t_3(environment.getattr(l_1_c, 'baseline')))
                yield '</td><td>'
                yield escape(environment.getattr(l_1_c, 'note'))
                yield '</td></tr>'
            l_1_c = missing
            yield '</tbody></table></div>'
        else:
            pass
            yield '<p class="meta">No regression.</p>'
    yield '\n'
    template = environment.get_template('_shapes.html', 'run.html')
    gen = template.root_render_func(template.new_context(context.get_all(), True, {'regressed': l_0_regressed, 'run': l_0_run, 's': l_0_s}))
    try:
        for event in gen:
            yield event
    finally: gen.close()
    yield '\n<h2>LLM usage</h2>\n'
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'usage'):
        pass
        yield '<div class="scroll"><table id="usage"><thead><tr><th>model</th><th class="num">calls</th><th class="num">cached</th><th class="num">requests</th><th class="num">failures</th><th class="num">prompt tokens</th><th class="num">completion tokens</th><th class="num">cost (USD)</th></tr></thead><tbody>\n'
        for l_1_u in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'usage'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_u, 'model'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'calls'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'cached'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'requests'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'failures'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'prompt_tokens'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_u, 'completion_tokens'))
            yield '</td><td class="num">'
            yield escape(('n/a (no price)' if t_8(environment.getattr(l_1_u, 'cost_usd')) else t_1('%.4f', environment.getattr(l_1_u, 'cost_usd'))))
            yield '</td></tr>'
        l_1_u = missing
        yield '</tbody></table></div>'
    else:
        pass
        yield '<p class="meta">No LLM calls.</p>'
    yield '\n<h2>Provenance</h2>\n'
    yield escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'kv'), (environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'provenance') + [('settings', t_6(context.eval_ctx, environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'settings'))), ('suite sha256', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_sha256')), ('suite file', (environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_path') or ''))]), _block_vars=_block_vars))
    yield '\n<h3>Tasks</h3>\n<div class="scroll"><table id="tasks"><thead><tr><th>task</th><th>kind</th><th>dataset</th><th>sha256</th><th class="num">items</th></tr></thead><tbody>\n'
    for l_1_t in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'tasks'):
        _loop_vars = {}
        pass
        yield '<tr><td>'
        yield escape(environment.getattr(l_1_t, 'task'))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_t, 'kind'))
        yield '</td><td>'
        yield escape((environment.getattr(l_1_t, 'dataset') or ''))
        yield '</td><td>'
        yield escape((environment.getattr(l_1_t, 'dataset_sha256') or ''))
        yield '</td><td class="num">'
        yield escape(environment.getattr(l_1_t, 'n_items'))
        yield '</td></tr>'
    l_1_t = missing
    yield '</tbody></table></div>\n<h3>Subjects</h3>\n'
    for (l_1_name, l_1_spec) in context.call(environment.getattr(environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'specs'), 'items'), _block_vars=_block_vars):
        _loop_vars = {}
        pass
        yield '<details><summary>'
        yield escape(l_1_name)
        yield '</summary><pre>'
        yield escape(l_1_spec)
        yield '</pre></details>'
    l_1_name = l_1_spec = missing
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'failures'):
        pass
        yield '<h2>Failures outside items</h2><div class="scroll"><table><thead><tr><th>subject</th><th>task</th><th>stage</th><th>kind</th><th>message</th></tr></thead><tbody>\n'
        for l_1_f in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'failures'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_f, 'subject'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'task'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'stage'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'kind'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'message'))
            yield '</td></tr>'
        l_1_f = missing
        yield '</tbody></table></div>'
    if (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone):
        pass
        template = environment.get_template('_report_items.html', 'run.html')
        gen = template.root_render_func(template.new_context(context.get_all(), True, {'regressed': l_0_regressed, 'run': l_0_run, 's': l_0_s}))
        try:
            for event in gen:
                yield event
        finally: gen.close()

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&2=20&3=32&4=95&5=100&6=104&7=108&8=122&9=127&10=131&11=136&12=141&13=143&14=147&15=152&16=154&17=169&21=172&22=175&23=183&24=189&25=205&26=216&28=249&30=267&32=273&34=276&35=286&36=297&38=309&39=312&40=320&41=322&42=325&45=347&48=354&49=357&53=383&56=385&59=401&60=410&61=413&62=429'
