from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'trends.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'trends.html')
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
    l_0_suite = resolve('suite')
    pass
    yield 'Trend of '
    yield escape((undefined(name='suite') if l_0_suite is missing else l_0_suite))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_suite = resolve('suite')
    l_0_t = resolve('t')
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
        t_3 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    pass
    yield '<h1>Trend <span class="meta">of suite '
    yield escape((undefined(name='suite') if l_0_suite is missing else l_0_suite))
    yield '</span></h1>\n'
    if (not environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'runs')):
        pass
        yield '<p class="meta">No completed run of this suite yet.</p>'
    else:
        pass
        yield '<p class="meta">'
        yield escape(t_1(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'runs')))
        yield " completed run(s), oldest first. The gate's baseline at each run is the mean of the "
        yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'window'))
        yield ' completed runs before it; the band is the run\'s 95% CI.</p>\n<div id="trend-chart">'
        yield escape(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'chart'))
        yield '</div>\n<div class="scroll"><table id="trend-measures"><thead><tr><th>subject / task / measure</th><th class="num">latest run</th><th class="num">its gate baseline</th></tr></thead><tbody>\n'
        for l_1_k in environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'measures'):
            l_1_url = resolve('url')
            _loop_vars = {}
            pass
            yield '<tr'
            if (l_1_k == environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'selected')):
                pass
                yield ' class="relevant"'
            yield '><td><a class="trend-link" href="'
            yield escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), '/trends', suite=(undefined(name='suite') if l_0_suite is missing else l_0_suite), measure=l_1_k, _loop_vars=_loop_vars))
            yield '">'
            yield escape(l_1_k)
            yield '</a></td><td class="num">'
            yield escape(t_2(environment.getitem(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'latest'), l_1_k)))
            yield '</td><td class="num">'
            yield escape(t_2(environment.getitem(environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'baselines'), l_1_k)))
            yield '</td></tr>'
        l_1_k = l_1_url = missing
        yield '</tbody></table></div>\n<h2>Runs</h2><ul>'
        for l_1_r in environment.getattr((undefined(name='t') if l_0_t is missing else l_0_t), 'runs'):
            l_1_url = resolve('url')
            _loop_vars = {}
            pass
            yield '<li><a href="'
            yield escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), markup_join(('/runs/', environment.getattr(l_1_r, 'run_id'), )), _loop_vars=_loop_vars))
            yield '">'
            yield escape(environment.getattr(l_1_r, 'run_id'))
            yield '</a> · '
            yield escape(t_3(environment.getattr(l_1_r, 'created_at')))
            yield '</li>'
        l_1_r = l_1_url = missing
        yield '</ul>\n'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=29&4=58&5=60&6=66&7=70&9=72&11=91'
