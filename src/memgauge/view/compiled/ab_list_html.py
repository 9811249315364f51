from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'ab_list.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'ab_list.html')
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
    yield 'A/B tests'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_tests = resolve('tests')
    l_0_shadows = resolve('shadows')
    pass
    yield '<h1>A/B tests</h1>\n'
    if (not (undefined(name='tests') if l_0_tests is missing else l_0_tests)):
        pass
        yield '<p class="meta">No A/B test yet: <code>memgauge ab create NAME --delta D</code>.</p>'
    else:
        pass
        yield '<div class="scroll"><table id="ab-tests"><thead><tr><th>test</th><th>status</th><th>metric</th><th class="num">pairs</th><th>decision</th></tr></thead><tbody>\n'
        for l_1_t in (undefined(name='tests') if l_0_tests is missing else l_0_tests):
            l_1_url = resolve('url')
            _loop_vars = {}
            pass
            yield '<tr><td><a href="'
            yield escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), '/ab/test', name=environment.getattr(l_1_t, 'name'), _loop_vars=_loop_vars))
            yield '">'
            yield escape(environment.getattr(l_1_t, 'name'))
            yield '</a></td><td>'
            yield escape(environment.getattr(l_1_t, 'status'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'metric'))
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_t, 'n_pairs'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'decision'))
            yield '</td></tr>'
        l_1_t = l_1_url = missing
        yield '</tbody></table></div>'
    yield '<h2>Shadow experiments</h2>\n'
    if (not (undefined(name='shadows') if l_0_shadows is missing else l_0_shadows)):
        pass
        yield '<p class="meta">None recorded.</p>'
    else:
        pass
        yield '<ul>'
        for l_1_s in (undefined(name='shadows') if l_0_shadows is missing else l_0_shadows):
            l_1_url = resolve('url')
            _loop_vars = {}
            pass
            yield '<li><a href="'
            yield escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), '/shadow', name=l_1_s, _loop_vars=_loop_vars))
            yield '">'
            yield escape(l_1_s)
            yield '</a></li>'
        l_1_s = l_1_url = missing
        yield '</ul>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=27&5=38&7=44&10=64'
