from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'shadow.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'shadow.html')
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
    l_0_s = resolve('s')
    pass
    yield 'Shadow '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'name'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_s = resolve('s')
    l_0_sm = missing
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
        t_5 = environment.filters['replace']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'replace' found.")
    pass
    l_0_sm = environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'summary')
    _block_vars['sm'] = l_0_sm
    yield '<h1>Shadow experiment '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'name'))
    yield '</h1>\n<p class="meta">'
    yield escape(environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'n'))
    yield ' comparison(s); '
    yield escape(environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'errors'))
    yield ' treatment call(s) failed (not counted).</p>\n'
    if environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'n'):
        pass
        yield '<div class="cards">'
        for (l_1_c, l_1_n) in context.call(environment.getattr(environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'classes'), 'items'), _block_vars=_block_vars):
            _loop_vars = {}
            pass
            yield '<div class="card">'
            yield escape(l_1_c)
            yield '<b>'
            yield escape(l_1_n)
            yield '</b>'
            yield escape(t_4((l_1_n / environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'n'))))
            yield '</div>'
        l_1_c = l_1_n = missing
        yield '</div>\n<div class="scroll"><table id="shadow-summary">\n'
        for l_1_k in ['mean_kendall_tau_b', 'mean_spearman_rho', 'mean_jaccard', 'mean_order_differences', 'top1_changed_rate', 'mean_mrr_delta', 'mean_ndcg_delta']:
            _loop_vars = {}
            pass
            yield '<tr><th>'
            yield escape(t_5(context.eval_ctx, l_1_k, '_', ' '))
            yield '</th><td class="num">'
            yield escape(t_3(environment.getitem((undefined(name='sm') if l_0_sm is missing else l_0_sm), l_1_k)))
            yield '</td></tr>'
        l_1_k = missing
        yield '<tr><th>p95 latency (ms), control → treatment</th><td class="num">'
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'p95_latency_ms'), 'control'), 1))
        yield ' → '
        yield escape(t_3(environment.getattr(environment.getattr((undefined(name='sm') if l_0_sm is missing else l_0_sm), 'p95_latency_ms'), 'treatment'), 1))
        yield '</td></tr></table></div>\n<h2>Latest comparisons</h2><div class="scroll"><table><thead><tr><th>query</th><th>class</th><th class="num">τ</th><th class="num">overlap</th><th>top-1 changed</th><th>control</th><th>treatment</th></tr></thead><tbody>\n'
        for l_1_r in environment.getattr((undefined(name='s') if l_0_s is missing else l_0_s), 'rows'):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(environment.getattr(l_1_r, 'query_id'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'classification'))
            yield '</td><td class="num">'
            yield escape(t_3(environment.getattr(l_1_r, 'kendall_tau_b')))
            yield '</td><td class="num">'
            yield escape(t_3(environment.getattr(l_1_r, 'jaccard')))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_r, 'top1_changed'))
            yield '</td><td>'
            yield escape(t_1(t_2(context.eval_ctx, (environment.getattr(l_1_r, 'control') or []), ', '), 80))
            yield '</td><td>'
            yield escape(t_1(t_2(context.eval_ctx, (environment.getattr(l_1_r, 'treatment') or []), ', '), 80))
            yield '</td></tr>'
        l_1_r = missing
        yield '</tbody></table></div>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=29&4=72&5=74&6=78&8=93&9=103&11=107'
