from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'ab.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'ab.html')
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
    l_0_a = resolve('a')
    pass
    yield 'A/B test '
    yield escape(environment.getattr(environment.getattr((undefined(name='a') if l_0_a is missing else l_0_a), 'report'), 'name'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_a = resolve('a')
    l_0_ci = resolve('ci')
    l_0_r = missing
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
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
        t_4 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_5 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_r = environment.getattr((undefined(name='a') if l_0_a is missing else l_0_a), 'report')
    _block_vars['r'] = l_0_r
    yield '<h1>A/B test '
    yield escape(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'name'))
    yield ' <span class="meta">'
    yield escape(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'metric'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'status'))
    yield '</span></h1>\n<div class="cards">\n<div class="card">decision<b id="ab-decision">'
    yield escape(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'decision'))
    yield '</b>'
    yield escape(t_1(context.eval_ctx, environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'reasons'), '; '))
    yield '</div>\n<div class="card">SPRT<b>'
    yield escape((environment.getattr(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'sprt'), 'decision') if environment.getattr(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'sprt'), 'started') else 'not started'))
    yield '</b>'
    yield escape(environment.getattr(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'sprt'), 'text'))
    yield '</div>\n<div class="card">mean Δ (treatment - control)<b>'
    yield escape(t_4(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'mean_delta')))
    yield '</b>'
    if environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'delta_ci95'):
        pass
        yield '95% CI '
        yield escape(context.call((undefined(name='ci') if l_0_ci is missing else l_0_ci), environment.getitem(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'delta_ci95'), 0), environment.getitem(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'delta_ci95'), 1), _block_vars=_block_vars))
    yield '</div>\n<div class="card">pairs<b>'
    yield escape(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'n_pairs'))
    yield '</b>'
    if (not t_5(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'p_treatment_better'))):
        pass
        yield 'P(T &gt; C) '
        yield escape(t_2(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'p_treatment_better')))
    yield '</div>\n<div class="card">p95 latency (ms)<b>'
    yield escape(t_2(environment.getattr(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'p95_latency_ms'), 'control'), 1))
    yield ' → '
    yield escape(t_2(environment.getattr(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'p95_latency_ms'), 'treatment'), 1))
    yield '</b>control → treatment</div>\n</div>\n'
    if environment.getattr((undefined(name='a') if l_0_a is missing else l_0_a), 'chart'):
        pass
        yield escape(environment.getattr((undefined(name='a') if l_0_a is missing else l_0_a), 'chart'))
    yield '<h2>Configuration</h2><pre>'
    yield escape(t_3(environment.getattr((undefined(name='r') if l_0_r is missing else l_0_r), 'config')))
    yield '</pre>\n'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=29&4=73&6=79&7=83&8=87&9=94&10=101&12=105&13=109'
