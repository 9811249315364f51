from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_report_items.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_rows = resolve('rows')
    l_0_n_items = resolve('n_items')
    l_0_details = resolve('details')
    try:
        t_1 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    pass
    yield '<h2>Items</h2>\n<p class="meta">'
    yield escape(t_1((undefined(name='rows') if l_0_rows is missing else l_0_rows)))
    yield ' of '
    yield escape((undefined(name='n_items') if l_0_n_items is missing else l_0_n_items))
    yield ' items'
    if (t_1((undefined(name='rows') if l_0_rows is missing else l_0_rows)) < (undefined(name='n_items') if l_0_n_items is missing else l_0_n_items)):
        pass
        yield ' (failures first; every item is in <code>memgauge runs export</code>)'
    yield '.</p>\n'
    template = environment.get_template('_items_table.html', '_report_items.html')
    gen = template.root_render_func(template.new_context(context.get_all(), True, {}))
    try:
        for event in gen:
            yield event
    finally: gen.close()
    l_1_loop = missing
    for l_1_it, l_1_loop in LoopContext((undefined(name='details') if l_0_details is missing else l_0_details), undefined):
        l_1_it_html = resolve('it_html')
        _loop_vars = {}
        pass
        yield '<details id="item-'
        yield escape(environment.getattr(l_1_loop, 'index'))
        yield '"><summary>'
        yield escape(environment.getattr(l_1_it, 'item_id'))
        yield ' · '
        yield escape(environment.getattr(l_1_it, 'subject'))
        yield ' · '
        yield escape(environment.getattr(l_1_it, 'task'))
        yield '</summary>'
        yield escape(environment.getitem((undefined(name='it_html') if l_1_it_html is missing else l_1_it_html), environment.getattr(l_1_loop, 'index0')))
        yield '</details>'
    l_1_loop = l_1_it = l_1_it_html = missing

blocks = {}
debug_info = '2=21&3=29&4=36&5=41'
