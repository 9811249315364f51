from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'items.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_m = missing
    pass
    parent_template = environment.get_template('base.html', 'items.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    l_0_m = context.vars['m'] = environment.get_template('_macros.html', 'items.html')._get_default_module(context)
    context.exported_vars.discard('m')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_run = resolve('run')
    pass
    yield 'Items of '
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_url = resolve('url')
    l_0_run = resolve('run')
    l_0_shows = resolve('shows')
    l_0_subjects = resolve('subjects')
    l_0_tasks = resolve('tasks')
    l_0_others = resolve('others')
    l_0_q = resolve('q')
    l_0_sorts = resolve('sorts')
    l_0_pager = resolve('pager')
    l_0_m = resolve('m')
    pass
    yield '<h1>Items <span class="meta">of <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), )), _block_vars=_block_vars))
    yield '">'
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'suite_name'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'))
    yield '</a></span></h1>\n<form class="filters" id="item-filters" method="get" action="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), '/items', )), _block_vars=_block_vars))
    yield '" hx-get="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', environment.getattr((undefined(name='run') if l_0_run is missing else l_0_run), 'run_id'), '/items', )), _block_vars=_block_vars))
    yield '" hx-trigger="change, submit, input delay:400ms from:input[name=q]" hx-target="#main" hx-select="#main" hx-swap="outerHTML" hx-push-url="true">\n<label>show<select name="show">'
    for l_1_v in (undefined(name='shows') if l_0_shows is missing else l_0_shows):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_v)
        yield '"'
        if (environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'show') == l_1_v):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_v)
        yield '</option>'
    l_1_v = missing
    yield '</select></label>\n<label>subject<select name="subject"><option value="">all</option>'
    for l_1_v in (undefined(name='subjects') if l_0_subjects is missing else l_0_subjects):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_v)
        yield '"'
        if (environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'subject') == l_1_v):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_v)
        yield '</option>'
    l_1_v = missing
    yield '</select></label>\n<label>task<select name="task"><option value="">all</option>'
    for l_1_v in (undefined(name='tasks') if l_0_tasks is missing else l_0_tasks):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_v)
        yield '"'
        if (environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'task') == l_1_v):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_v)
        yield '</option>'
    l_1_v = missing
    yield '</select></label>\n<label>baseline run (for changed, regressed)<select name="baseline"><option value="">none</option>'
    for l_1_o in (undefined(name='others') if l_0_others is missing else l_0_others):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(environment.getattr(l_1_o, 'run_id'))
        yield '"'
        if (environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'baseline') == environment.getattr(l_1_o, 'run_id')):
            pass
            yield ' selected'
        yield '>'
        yield escape(environment.getattr(l_1_o, 'run_id'))
        yield '</option>'
    l_1_o = missing
    yield '</select></label>\n<label>search<input type="search" name="q" value="'
    yield escape(environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'q'))
    yield '" placeholder="text, output, reason, id"></label>\n<label>sort<select name="sort">'
    for l_1_v in (undefined(name='sorts') if l_0_sorts is missing else l_0_sorts):
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_v)
        yield '"'
        if (environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'sort') == l_1_v):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_v)
        yield '</option>'
    l_1_v = missing
    yield '</select></label>\n<label>order<select name="order"><option value="asc">ascending</option><option value="desc"'
    if environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'desc'):
        pass
        yield ' selected'
    yield '>descending</option></select></label>\n<button type="submit">apply</button>\n</form>\n'
    if ((environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'show') in ('changed', 'regressed')) and (not environment.getattr((undefined(name='q') if l_0_q is missing else l_0_q), 'baseline'))):
        pass
        yield '<p class="warn">Choose a baseline run to see what changed or regressed; showing every item.</p>'
    yield '<p class="meta" id="item-count">'
    yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'total'))
    yield ' item(s) match'
    if environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'total'):
        pass
        yield '; '
        yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'first'))
        yield '-'
        yield escape(environment.getattr((undefined(name='pager') if l_0_pager is missing else l_0_pager), 'last'))
        yield ' shown'
    yield '.</p>\n'
    template = environment.get_template('_items_table.html', 'items.html')
    gen = template.root_render_func(template.new_context(context.get_all(), True, {}))
    try:
        for event in gen:
            yield event
    finally: gen.close()
    yield escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'pager'), (undefined(name='pager') if l_0_pager is missing else l_0_pager), _block_vars=_block_vars))
    yield '\n'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&2=20&3=32&4=51&5=57&6=61&7=75&8=89&9=103&10=117&11=119&12=133&15=137&16=141&17=151&18=157'
