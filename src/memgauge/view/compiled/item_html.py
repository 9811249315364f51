from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'item.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'item.html')
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
    l_0_it = resolve('it')
    pass
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'item_id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_it = resolve('it')
    l_0_url = resolve('url')
    l_0_run = resolve('run')
    l_0_p = resolve('p')
    pass
    yield '<h1>'
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'item_id'))
    yield ' <span class="meta">'
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'subject'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'task'))
    yield ' · <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), )), _block_vars=_block_vars))
    yield '">run '
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'))
    yield '</a> · <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), '/items', )), subject=environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'subject'), task=environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'task'), _block_vars=_block_vars))
    yield '">items</a></span></h1>\n'
    template = environment.get_template('_item_detail.html', 'item.html')
    gen = template.root_render_func(template.new_context(context.get_all(), True, {}))
    try:
        for event in gen:
            yield event
    finally: gen.close()
    if environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'sections'):
        pass
        template = environment.get_template('_shapes.html', 'item.html')
        gen = template.root_render_func(template.new_context(context.get_all(), True, {}))
        try:
            for event in gen:
                yield event
        finally: gen.close()

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=28&4=41&5=53&6=59'
