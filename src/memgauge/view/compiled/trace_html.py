from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'trace.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'trace.html')
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
    l_0_t = resolve('t')
    pass
    yield 'Trace '
    yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'trace_id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_t = resolve('t')
    l_0_url = resolve('url')
    l_0_when = resolve('when')
    l_0_ms = resolve('ms')
    l_0_chart = resolve('chart')
    l_0_rows = resolve('rows')
    l_0_trace = resolve('trace')
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
        t_3 = environment.filters['pretty']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'pretty' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<h1>Trace <span id="trace-id">'
    yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'trace_id'))
    yield '</span></h1>\n<p class="meta">'
    if environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'session_id'):
        pass
        yield 'session <a href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/traces', session=environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'session_id'), _block_vars=_block_vars))
        yield '">'
        yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'session_id'))
        yield '</a> · '
    yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'format'))
    yield ' from '
    yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'source'))
    yield ' · started '
    yield escape((context.call((undefined(name='when') if l_0_when is missing else l_0_when), environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'start_ns'), _block_vars=_block_vars) or 'n/a'))
    yield ' UTC · '
    yield escape(context.call((undefined(name='ms') if l_0_ms is missing else l_0_ms), environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'duration_ms'), _block_vars=_block_vars))
    yield ' · '
    yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'n_spans'))
    yield ' spans · tokens in '
    yield escape((environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'prompt_tokens') if (not t_4(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'prompt_tokens'))) else 'n/a'))
    yield ', out '
    yield escape((environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'completion_tokens') if (not t_4(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'completion_tokens'))) else 'n/a'))
    yield '</p>\n'
    if environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'error'):
        pass
        yield '<p class="warn" id="trace-error">Error: '
        yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'error'))
        yield '</p>'
    yield '<h2>Final answer</h2>\n'
    if (not t_4(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'answer'))):
        pass
        yield '<pre id="answer">'
        yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'answer'))
        yield '</pre>'
    else:
        pass
        yield '<p class="meta" id="answer">No answer (the root span gave no output'
        if (not environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'root_span_id')):
            pass
            yield ', or the file holds no root span of this trace'
        yield ').</p>'
    yield '<h2>Spans</h2>\n<div class="scroll chart-box">'
    yield escape((undefined(name='chart') if l_0_chart is missing else l_0_chart))
    yield '</div>\n<div class="scroll"><table class="spans"><thead><tr><th>span</th><th>kind</th><th>starts</th><th>takes</th><th>status</th></tr></thead><tbody>\n'
    for l_1_r in (undefined(name='rows') if l_0_rows is missing else l_0_rows):
        _loop_vars = {}
        pass
        yield '<tr class="span-row depth-'
        yield escape(environment.getattr(l_1_r, 'depth'))
        yield '"><td>'
        yield escape(('· ' * environment.getattr(l_1_r, 'depth')))
        yield escape((environment.getattr(environment.getattr(l_1_r, 'span'), 'name') or ''))
        yield ' <span class="meta">'
        yield escape(environment.getattr(environment.getattr(l_1_r, 'span'), 'span_id'))
        yield '</span></td><td>'
        yield escape(environment.getattr(environment.getattr(l_1_r, 'span'), 'kind'))
        yield '</td><td>'
        yield escape(context.call((undefined(name='ms') if l_0_ms is missing else l_0_ms), environment.getattr(l_1_r, 'offset_ms'), _loop_vars=_loop_vars))
        yield '</td><td>'
        yield escape(context.call((undefined(name='ms') if l_0_ms is missing else l_0_ms), environment.getattr(l_1_r, 'duration_ms'), _loop_vars=_loop_vars))
        yield '</td><td>'
        if environment.getattr(environment.getattr(l_1_r, 'span'), 'error'):
            pass
            yield '<span class="warn">'
            yield escape(environment.getattr(environment.getattr(l_1_r, 'span'), 'error'))
            yield '</span>'
        else:
            pass
            yield 'ok'
        yield '</td></tr>\n'
    l_1_r = missing
    yield '</tbody></table></div>\n<h2>Searches ('
    yield escape(t_1(environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'retrievals')))
    yield ')</h2>\n'
    l_1_loop = missing
    t_5 = 1
    for l_1_s, l_1_loop in LoopContext(environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'retrievals'), undefined):
        l_1_names = resolve('names')
        _loop_vars = {}
        pass
        yield '<section class="retrieval"><h3>'
        yield escape(environment.getitem((undefined(name='names') if l_1_names is missing else l_1_names), environment.getattr(l_1_s, 'span_id')))
        yield ': <q>'
        yield escape(environment.getattr(l_1_s, 'query'))
        yield '</q> <span class="meta">'
        yield escape(context.call((undefined(name='ms') if l_0_ms is missing else l_0_ms), environment.getattr(l_1_s, 'latency_ms'), _loop_vars=_loop_vars))
        yield '</span></h3>\n<div class="scroll"><table class="hits"><thead><tr><th>rank</th><th>memory</th><th>score</th></tr></thead><tbody>\n'
        l_2_loop = missing
        t_6 = 1
        for l_2_id, l_2_loop in LoopContext(environment.getattr(l_1_s, 'result_ids'), undefined):
            l_2_sc = missing
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_2_loop, 'index'))
            yield '</td><td>'
            yield escape(l_2_id)
            yield '</td><td>'
            l_2_sc = (environment.getitem(environment.getattr(l_1_s, 'scores'), environment.getattr(l_2_loop, 'index0')) if (environment.getattr(l_2_loop, 'index0') < t_1(environment.getattr(l_1_s, 'scores'))) else None)
            _loop_vars['sc'] = l_2_sc
            yield escape((t_2((undefined(name='sc') if l_2_sc is missing else l_2_sc)) if (not t_4((undefined(name='sc') if l_2_sc is missing else l_2_sc))) else 'n/a'))
            yield '</td></tr>\n'
            t_6 = 0
        l_2_loop = l_2_id = l_2_sc = missing
        if t_6:
            pass
            yield '<tr><td colspan="3" class="meta">Found nothing.</td></tr>'
        yield '</tbody></table></div></section>\n'
        t_5 = 0
    l_1_loop = l_1_s = l_1_names = missing
    if t_5:
        pass
        yield '<p class="meta">No search.</p>'
    yield '<h2>Tool calls ('
    yield escape(t_1(environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'tool_calls')))
    yield ')</h2>\n'
    t_7 = 1
    for l_1_c in environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'tool_calls'):
        _loop_vars = {}
        pass
        yield '<section class="tool-call"><h3>'
        yield escape((environment.getattr(l_1_c, 'name') or '(unnamed tool)'))
        yield '</h3>\n<p class="meta">arguments</p><pre>'
        yield escape((t_3(environment.getattr(l_1_c, 'arguments')) if (not t_4(environment.getattr(l_1_c, 'arguments'))) else ''))
        yield '</pre>\n'
        if environment.getattr(l_1_c, 'error'):
            pass
            yield '<p class="warn">Error: '
            yield escape(environment.getattr(l_1_c, 'error'))
            yield '</p>'
        else:
            pass
            yield '<p class="meta">result</p><pre>'
            yield escape((t_3(environment.getattr(l_1_c, 'result')) if (not t_4(environment.getattr(l_1_c, 'result'))) else ''))
            yield '</pre>'
        yield '</section>\n'
        t_7 = 0
    l_1_c = missing
    if t_7:
        pass
        yield '<p class="meta">No tool call.</p>'
    yield '<h2>Model calls ('
    yield escape(t_1(environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'llm_calls')))
    yield ')</h2>\n'
    t_8 = 1
    for l_1_c in environment.getattr((undefined(name='trace') if l_0_trace is missing else l_0_trace), 'llm_calls'):
        _loop_vars = {}
        pass
        yield '<section class="llm-call"><h3>'
        yield escape((environment.getattr(l_1_c, 'model') or '(model not given)'))
        yield '</h3>\n<p class="meta tokens">tokens in '
        yield escape((environment.getattr(l_1_c, 'prompt_tokens') if (not t_4(environment.getattr(l_1_c, 'prompt_tokens'))) else 'n/a'))
        yield ' · out '
        yield escape((environment.getattr(l_1_c, 'completion_tokens') if (not t_4(environment.getattr(l_1_c, 'completion_tokens'))) else 'n/a'))
        yield ' · total '
        yield escape((environment.getattr(l_1_c, 'total_tokens') if (not t_4(environment.getattr(l_1_c, 'total_tokens'))) else 'n/a'))
        yield '</p>\n'
        if environment.getattr(l_1_c, 'error'):
            pass
            yield '<p class="warn">Error: '
            yield escape(environment.getattr(l_1_c, 'error'))
            yield '</p>'
        if (not t_4(environment.getattr(l_1_c, 'output'))):
            pass
            yield '<pre>'
            yield escape(environment.getattr(l_1_c, 'output'))
            yield '</pre>'
        yield '</section>\n'
        t_8 = 0
    l_1_c = missing
    if t_8:
        pass
        yield '<p class="meta">No model call.</p>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=29&4=69&5=71&6=92&8=98&10=111&12=113&14=141&15=145&17=158&20=183&21=186&22=192&23=194&25=211&26=214&27=220&28=226'
