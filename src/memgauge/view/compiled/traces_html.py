from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'traces.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_m = missing
    pass
    parent_template = environment.get_template('base.html', 'traces.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    l_0_m = context.vars['m'] = environment.get_template('_macros.html', 'traces.html')._get_default_module(context)
    context.exported_vars.discard('m')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Traces'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_url = resolve('url')
    l_0_sessions = resolve('sessions')
    l_0_errors = resolve('errors')
    l_0_filters = resolve('filters')
    l_0_pager = resolve('pager')
    l_0_rows = resolve('rows')
    l_0_m = resolve('m')
    try:
        t_1 = environment.filters['brief']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'brief' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<h1>Traces</h1>\n<p class="meta">Agent traces kept by <code>memgauge logs import-traces --store</code>: each with its searches, tool calls, model calls and final answer. Newest first.</p>\n<form class="filters" id="trace-filters" method="get" action="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/traces', _block_vars=_block_vars))
    yield '">\n<label>session<select name="session"><option value="">all</option>'
    for (l_1_s, l_1_n) in (undefined(name='sessions') if l_0_sessions is missing else l_0_sessions):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_s)
        yield '"'
        if (environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'session') == l_1_s):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_s)
        yield ' ('
        yield escape(l_1_n)
        yield ')</option>'
    l_1_s = l_1_n = missing
    yield '</select></label>\n<label>error<select name="error">'
    for l_1_e in (undefined(name='errors') if l_0_errors is missing else l_0_errors):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_e)
        yield '"'
        if (environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'error') == l_1_e):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_e)
        yield '</option>'
    l_1_e = missing
    yield '</select></label>\n<label>answer holds<input type="search" name="q" value="'
    yield escape(environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'q'))
    yield '"></label>\n<button type="submit">apply</button>\n</form>\n'
    if (undefined(name='sessions') if l_0_sessions is missing else l_0_sessions):
        pass
        yield '<h2>Sessions</h2>\n<p class="sessions">'
        for (l_1_s, l_1_n) in (undefined(name='sessions') if l_0_sessions is missing else l_0_sessions):
            _loop_vars = {}
            pass
            yield '<a class="chip session-link" href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/traces', session=l_1_s, _loop_vars=_loop_vars))
            yield '">'
            yield escape(l_1_s)
            yield ' · '
            yield escape(l_1_n)
            yield ' trace'
            yield escape(('' if (l_1_n == 1) else 's'))
            yield '</a>'
        l_1_s = l_1_n = missing
        yield '</p>'
    yield '<h2>Traces</h2>\n<p class="meta" id="trace-count">'
    yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'total'))
    yield ' trace(s) match'
    if environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'total'):
        pass
        yield '; '
        yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'first'))
        yield '-'
        yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'last'))
        yield ' shown'
    yield '.</p>\n<div class="scroll"><table class="traces"><thead><tr><th>trace</th><th>session</th><th>root</th><th>started (UTC)</th><th>duration</th><th>spans</th><th>searches</th><th>tool calls</th><th>model calls</th><th>tokens in / out</th><th>error</th><th>answer</th></tr></thead><tbody>\n'
    t_3 = 1
    for l_1_r in (undefined(name='rows') if l_0_rows is missing else l_0_rows):
        l_1_trace_url = resolve('trace_url')
        l_1_when = resolve('when')
        l_1_ms = resolve('ms')
        _loop_vars = {}
        pass
        yield '<tr><td><a class="trace-link" href="'
        yield escape(context.call((undefined(name='trace_url') if l_1_trace_url is missing else l_1_trace_url), environment.getattr(l_1_r, 'trace_id'), _loop_vars=_loop_vars))
        yield '">'
        yield escape(environment.getattr(l_1_r, 'trace_id'))
        yield '</a></td><td>'
        yield escape((environment.getattr(l_1_r, 'session_id') or ''))
        yield '</td><td>'
        yield escape((environment.getattr(l_1_r, 'root_name') or ''))
        yield '</td><td>'
        yield escape(context.call((undefined(name='when') if l_1_when is missing else l_1_when), environment.getattr(l_1_r, 'start_ns'), _loop_vars=_loop_vars))
        yield '</td><td>'
        yield escape(context.call((undefined(name='ms') if l_1_ms is missing else l_1_ms), environment.getattr(l_1_r, 'duration_ms'), _loop_vars=_loop_vars))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_r, 'n_spans'))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_r, 'n_retrievals'))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_r, 'n_tool_calls'))
        yield '</td><td>'
        yield escape(environment.getattr(l_1_r, 'n_llm_calls'))
        yield '</td><td>'
        yield escape((environment.getattr(l_1_r, 'prompt_tokens') if (not t_2(environment.getattr(l_1_r, 'prompt_tokens'))) else 'n/a'))
        yield ' / '
        yield escape((environment.getattr(l_1_r, 'completion_tokens') if (not t_2(environment.getattr(l_1_r, 'completion_tokens'))) else 'n/a'))
        yield '</td><td>'
        if environment.getattr(l_1_r, 'error'):
            pass
            yield '<span class="warn">'
            yield escape(t_1(environment.getattr(l_1_r, 'error'), 80))
            yield '</span>'
        yield '</td><td>'
        yield escape((t_1(environment.getattr(l_1_r, 'answer'), 120) if (not t_2(environment.getattr(l_1_r, 'answer'))) else ''))
        yield '</td></tr>\n'
        t_3 = 0
    l_1_r = l_1_trace_url = l_1_when = l_1_ms = missing
    if t_3:
        pass
        yield '<tr><td colspan="12" class="meta">No trace matches.</td></tr>'
    yield '</tbody></table></div>\n'
    yield escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'pager'), (undefined(name='pager') if l_0_pager is missing else l_0_pager), _block_vars=_block_vars))
    yield '\n'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&2=20&3=30&6=58&7=60&8=76&9=90&12=92&13=95&15=110&17=121&20=166'
