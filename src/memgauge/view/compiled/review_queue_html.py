from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'review_queue.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('base.html', 'review_queue.html')
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
    l_0_run_id = resolve('run_id')
    pass
    yield 'Review '
    yield escape((undefined(name='run_id') if l_0_run_id is missing else l_0_run_id))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_reviewer = resolve('reviewer')
    l_0_url = resolve('url')
    l_0_runs = resolve('runs')
    l_0_rows = resolve('rows')
    l_0_n_todo = resolve('n_todo')
    try:
        t_1 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    pass
    yield '<h1>Review <span class="meta">as <b id="reviewer">'
    yield escape((undefined(name='reviewer') if l_0_reviewer is missing else l_0_reviewer))
    yield '</b></span></h1>\n<p class="meta">Items you have not labelled come first; within them, disagreements (a reviewer who said otherwise than the machine, or verdicts that differ among themselves). Every label is kept with its reviewer and time; yours never replaces another reviewer\'s.</p>\n<form class="filters" id="review-filters" method="get" action="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/review', _block_vars=_block_vars))
    yield '">\n<label>run<select name="run">'
    for l_1_r in (undefined(name='runs') if l_0_runs is missing else l_0_runs):
        l_1_run_id = resolve('run_id')
        _loop_vars = {}
        pass
        yield '<option value="'
        yield escape(l_1_r)
        yield '"'
        if (l_1_r == (undefined(name='run_id') if l_1_run_id is missing else l_1_run_id)):
            pass
            yield ' selected'
        yield '>'
        yield escape(l_1_r)
        yield '</option>'
    l_1_r = l_1_run_id = missing
    yield '</select></label>\n'
    for l_1_k in ['subject', 'task', 'category']:
        l_1_choices = resolve('choices')
        _loop_vars = {}
        pass
        yield '<label>'
        yield escape(l_1_k)
        yield '<select name="'
        yield escape(l_1_k)
        yield '"><option value="">all</option>'
        for l_2_v in environment.getitem((undefined(name='choices') if l_1_choices is missing else l_1_choices), l_1_k):
            l_2_filters = resolve('filters')
            _loop_vars = {}
            pass
            yield '<option value="'
            yield escape(l_2_v)
            yield '"'
            if (environment.getitem((undefined(name='filters') if l_2_filters is missing else l_2_filters), l_1_k) == l_2_v):
                pass
                yield ' selected'
            yield '>'
            yield escape(l_2_v)
            yield '</option>'
        l_2_v = l_2_filters = missing
        yield '</select></label>'
    l_1_k = l_1_choices = missing
    yield '<button type="submit">apply</button>\n</form>\n<p class="meta" id="queue-count">'
    yield escape(t_1((undefined(name='rows') if l_0_rows is missing else l_0_rows)))
    yield ' item(s); '
    yield escape((undefined(name='n_todo') if l_0_n_todo is missing else l_0_n_todo))
    yield ' not labelled by you.</p>\n<div class="scroll"><table class="review-queue"><thead><tr><th>item</th><th>subject</th><th>task</th><th>category</th><th>disagreement</th><th>labelled by</th><th></th></tr></thead><tbody>\n'
    t_2 = 1
    for l_1_r in (undefined(name='rows') if l_0_rows is missing else l_0_rows):
        _loop_vars = {}
        pass
        yield '<tr class="'
        yield escape(('done' if environment.getattr(l_1_r, 'mine') else 'todo'))
        yield '"><td>'
        yield escape(environment.getattr(environment.getattr(l_1_r, 'item'), 'item_id'))
        yield '</td><td>'
        yield escape(environment.getattr(environment.getattr(l_1_r, 'item'), 'subject'))
        yield '</td><td>'
        yield escape(environment.getattr(environment.getattr(l_1_r, 'item'), 'task'))
        yield '</td><td>'
        yield escape((environment.getattr(environment.getattr(l_1_r, 'item'), 'category') or ''))
        yield '</td><td>'
        if environment.getattr(l_1_r, 'disagreement'):
            pass
            yield '<span class="warn">yes</span>'
        yield '</td><td>'
        for l_2_who in environment.getattr(l_1_r, 'reviewers'):
            _loop_vars = {}
            pass
            yield '<span class="chip">'
            yield escape(l_2_who)
            yield '</span>'
        l_2_who = missing
        yield '</td><td><a class="review-link" href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), environment.getattr(l_1_r, 'url'), _loop_vars=_loop_vars))
        yield '">review</a></td></tr>\n'
        t_2 = 0
    l_1_r = missing
    if t_2:
        pass
        yield '<tr><td colspan="7" class="meta">No item matches.</td></tr>'
    yield '</tbody></table></div>\n'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=12&2=17&3=29&4=49&6=51&7=53&8=68&11=94&13=99'
