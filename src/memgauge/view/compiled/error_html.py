from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'error.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'error.html')
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
    l_0_status_code = resolve('status_code')
    pass
    yield escape((undefined(name='status_code') if l_0_status_code is missing else l_0_status_code))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_title = resolve('title')
    l_0_message = resolve('message')
    l_0_url = resolve('url')
    pass
    yield '<h1>'
    yield escape((undefined(name='title') if l_0_title is missing else l_0_title))
    yield '</h1><p>'
    yield escape((undefined(name='message') if l_0_message is missing else l_0_message))
    yield '</p><p><a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/', _block_vars=_block_vars))
    yield '">All runs</a></p>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=28'
