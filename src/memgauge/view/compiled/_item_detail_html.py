from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_item_detail.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_status_badge = resolve('status_badge')
    l_0_it = resolve('it')
    l_0_hits = resolve('hits')
    l_0_rel_threshold = resolve('rel_threshold')
    l_0_hit_table_rows = resolve('hit_table_rows')
    l_0_missing = resolve('missing')
    l_0_query = resolve('query')
    l_0_agent_metric_rows = resolve('agent_metric_rows')
    l_0_verdict_blocks = resolve('verdict_blocks')
    l_0_cause = missing
    try:
        t_1 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_2 = environment.filters['pretty']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'pretty' found.")
    try:
        t_3 = environment.filters['replace']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'replace' found.")
    try:
        t_4 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    try:
        t_5 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_6 = environment.tests['mapping']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No test named 'mapping' found.")
    try:
        t_7 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<div class="scroll"><table class="item-meta"><tr><th>status</th><td>'
    yield escape(context.call((undefined(name='status_badge') if l_0_status_badge is missing else l_0_status_badge), environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'status')))
    yield ' · '
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'attempts'))
    yield ' attempt(s)'
    if (not t_7(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'duration_ms'))):
        pass
        yield ' · '
        yield escape(t_1(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'duration_ms'), 1))
        yield ' ms'
    yield '</td></tr>\n'
    if environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'category'):
        pass
        yield '<tr><th>category</th><td>'
        yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'category'))
        yield '</td></tr>'
    if environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'latency_ms'):
        pass
        yield '<tr><th>latency (ms)</th><td>'
        l_1_loop = missing
        for (l_1_k, l_1_v), l_1_loop in LoopContext(context.call(environment.getattr(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'latency_ms'), 'items')), undefined):
            _loop_vars = {}
            pass
            yield escape(l_1_k)
            yield ' '
            yield escape(t_1(l_1_v, 2))
            if (not environment.getattr(l_1_loop, 'last')):
                pass
                yield ' · '
        l_1_loop = l_1_k = l_1_v = missing
        yield '</td></tr>'
    yield '<tr><th>score</th><td>'
    yield escape(t_1(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'score')))
    yield '</td></tr></table></div>\n<h3>Input</h3><pre class="input">'
    yield escape(t_2(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'input')))
    yield '</pre>\n'
    if (not t_7((undefined(name='hits') if l_0_hits is missing else l_0_hits))):
        pass
        yield '<h3>Ranked hits</h3><p class="meta">Relevant memories (grade &gt;= '
        yield escape((undefined(name='rel_threshold') if l_0_rel_threshold is missing else l_0_rel_threshold))
        yield ') are highlighted.</p>\n<div class="scroll"><table class="hits"><thead><tr><th class="num">rank</th><th>memory</th><th>text</th><th class="num">grade</th><th>channels</th><th class="num">score</th></tr></thead><tbody>\n'
        yield escape(context.call((undefined(name='hit_table_rows') if l_0_hit_table_rows is missing else l_0_hit_table_rows), (undefined(name='hits') if l_0_hits is missing else l_0_hits)))
        yield '</tbody></table></div>\n'
        if (undefined(name='missing') if l_0_missing is missing else l_0_missing):
            pass
            yield '<p class="meta">Relevant but not retrieved: '
            for l_1_mid in (undefined(name='missing') if l_0_missing is missing else l_0_missing):
                _loop_vars = {}
                pass
                yield '<span class="chip">'
                yield escape(l_1_mid)
                yield '</span>'
            l_1_mid = missing
            yield '</p>'
    else:
        pass
        yield '<h3>Output</h3><pre class="output">'
        yield escape(t_2(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'output')))
        yield '</pre>'
    if environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'agent_metrics'):
        pass
        yield '<h3>Agent-memory metrics of this query</h3><div class="scroll"><table class="query-agent"><tbody>\n'
        yield escape(context.call((undefined(name='agent_metric_rows') if l_0_agent_metric_rows is missing else l_0_agent_metric_rows), environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'agent_metrics')))
        yield '</tbody></table></div>'
    if environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'relevant_channels'):
        pass
        yield '<p class="meta">Channels that produced the judged memories (sourceChannels): '
        l_1_loop = missing
        for (l_1_mid, l_1_chans), l_1_loop in LoopContext(context.call(environment.getattr(environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'relevant_channels'), 'items')), undefined):
            _loop_vars = {}
            pass
            yield escape(l_1_mid)
            yield ' '
            for l_2_c in l_1_chans:
                _loop_vars = {}
                pass
                yield '<span class="chip">'
                yield escape(l_2_c)
                yield '</span>'
            l_2_c = missing
            if (not environment.getattr(l_1_loop, 'last')):
                pass
                yield ' · '
        l_1_loop = l_1_mid = l_1_chans = missing
        yield '</p>'
    if ((not t_7(environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'pre_expansion'))) and t_5(environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'pre_expansion'))):
        pass
        yield '<p class="meta">Before query expansion: '
        for l_1_mid in environment.getattr((undefined(name='query') if l_0_query is missing else l_0_query), 'pre_expansion'):
            _loop_vars = {}
            pass
            yield '<span class="chip">'
            yield escape(l_1_mid)
            yield '</span>'
        l_1_mid = missing
        yield '</p>'
    yield '<h3>Expected</h3><pre class="expected">'
    yield escape(t_2(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'expected')))
    yield '</pre>\n'
    if environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'extra'):
        pass
        yield '<h3>Also returned</h3><pre>'
        yield escape(t_2(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'extra')))
        yield '</pre>'
    l_0_cause = (context.call(environment.getattr(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'extra'), 'get'), 'attribution') if environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'extra') else None)
    context.vars['cause'] = l_0_cause
    context.exported_vars.add('cause')
    if (t_6((undefined(name='cause') if l_0_cause is missing else l_0_cause)) and context.call(environment.getattr((undefined(name='cause') if l_0_cause is missing else l_0_cause), 'get'), 'cause')):
        pass
        yield '<h3>Why the answer is wrong</h3><p class="cause"><span class="chip">'
        yield escape(t_3(context.eval_ctx, environment.getitem((undefined(name='cause') if l_0_cause is missing else l_0_cause), 'cause'), '_', ' '))
        yield '</span> '
        yield escape(context.call(environment.getattr((undefined(name='cause') if l_0_cause is missing else l_0_cause), 'get'), 'text', ''))
        yield '</p>'
    yield '<h3>Verdicts</h3>\n'
    yield escape(context.call((undefined(name='verdict_blocks') if l_0_verdict_blocks is missing else l_0_verdict_blocks), environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'scores')))
    if environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'failures'):
        pass
        yield '<h3>Failures</h3><div class="scroll"><table class="failures"><thead><tr><th>attempt</th><th>stage</th><th>kind</th><th>message</th><th>at</th></tr></thead><tbody>\n'
        for l_1_f in environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'failures'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_f, 'attempt'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'stage'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_f, 'kind'))
            yield '</td><td class="reason">'
            yield escape(environment.getattr(l_1_f, 'message'))
            yield '</td><td>'
            yield escape(t_4(environment.getattr(l_1_f, 'at')))
            yield '</td></tr>'
        l_1_f = missing
        yield '</tbody></table></div>'

blocks = {}
debug_info = '1=64&2=74&3=79&4=95&5=97&6=99&8=104&9=106&10=120&11=122&12=125&13=127&14=148&15=160&16=162&17=167&19=178&20=182'
