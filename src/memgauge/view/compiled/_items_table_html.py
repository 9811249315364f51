from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_items_table.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_evaluators = resolve('evaluators')
    l_0_rows = resolve('rows')
    l_0_item_table_rows = resolve('item_table_rows')
    l_0_standalone = resolve('standalone')
    l_0_item_url = resolve('item_url')
    l_0_evals = missing
    pass
    l_0_evals = context.call((undefined(name='evaluators') if l_0_evaluators is missing else l_0_evaluators), (undefined(name='rows') if l_0_rows is missing else l_0_rows))
    context.vars['evals'] = l_0_evals
    context.exported_vars.add('evals')
    yield '<div class="scroll"><table id="items"><thead><tr><th>item</th><th>subject</th><th>task</th><th>status</th><th>input</th><th>output</th><th>expected</th>'
    for l_1_e in (undefined(name='evals') if l_0_evals is missing else l_0_evals):
        _loop_vars = {}
        pass
        yield '<th>'
        yield escape(l_1_e)
        yield '</th>'
    l_1_e = missing
    yield '<th class="num">score</th><th class="num">ms</th></tr></thead><tbody>\n'
    yield escape(context.call((undefined(name='item_table_rows') if l_0_item_table_rows is missing else l_0_item_table_rows), (undefined(name='rows') if l_0_rows is missing else l_0_rows), (undefined(name='evals') if l_0_evals is missing else l_0_evals), (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone), (undefined(name='item_url') if l_0_item_url is missing else l_0_item_url)))
    yield '</tbody></table></div>'

blocks = {}
debug_info = '1=17&2=21&3=29'
