from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'review_item.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_hidden = l_0_others = missing
    pass
    parent_template = environment.get_template('base.html', 'review_item.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    def macro(l_1_kind, l_1_target):
        t_1 = []
        l_1_csrf = resolve('csrf')
        l_1_run_id = resolve('run_id')
        l_1_it = resolve('it')
        if l_1_kind is missing:
            l_1_kind = undefined("parameter 'kind' was not provided", name='kind')
        if l_1_target is missing:
            l_1_target = undefined("parameter 'target' was not provided", name='target')
        pass
        t_1.extend((
            '<input type="hidden" name="csrf" value="',
            escape((undefined(name='csrf') if l_1_csrf is missing else l_1_csrf)),
            '"><input type="hidden" name="run" value="',
            escape((undefined(name='run_id') if l_1_run_id is missing else l_1_run_id)),
            '"><input type="hidden" name="subject" value="',
            escape(environment.getattr((undefined(name='it') if l_1_it is missing else l_1_it), 'subject')),
            '"><input type="hidden" name="task" value="',
            escape(environment.getattr((undefined(name='it') if l_1_it is missing else l_1_it), 'task')),
            '"><input type="hidden" name="item" value="',
            escape(environment.getattr((undefined(name='it') if l_1_it is missing else l_1_it), 'item_id')),
            '"><input type="hidden" name="kind" value="',
            escape(l_1_kind),
            '"><input type="hidden" name="target" value="',
            escape(l_1_target),
            '">',
        ))
        return concat(t_1)
    context.exported_vars.add('hidden')
    context.vars['hidden'] = l_0_hidden = Macro(environment, macro, 'hidden', ('kind', 'target'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_t):
        t_2 = []
        l_1_given = resolve('given')
        if l_1_t is missing:
            l_1_t = undefined("parameter 't' was not provided", name='t')
        pass
        for l_2_lab in context.call((undefined(name='given') if l_1_given is missing else l_1_given), l_1_t):
            _loop_vars = {}
            pass
            t_2.extend((
                '<span class="chip label-given">',
                escape(environment.getattr(l_2_lab, 'reviewer')),
                ': ',
                escape(environment.getattr(l_2_lab, 'value')),
            ))
            if environment.getattr(l_2_lab, 'note'):
                pass
                t_2.extend((
                    ' (',
                    escape(environment.getattr(l_2_lab, 'note')),
                    ')',
                ))
            t_2.append(
                '</span>',
            )
        l_2_lab = missing
        return concat(t_2)
    context.exported_vars.add('others')
    context.vars['others'] = l_0_others = Macro(environment, macro, 'others', ('t',), False, False, False, context.eval_ctx.autoescape)
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
    yield 'Review '
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'item_id'))

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_it = resolve('it')
    l_0_reviewer = resolve('reviewer')
    l_0_url = resolve('url')
    l_0_queue_url = resolve('queue_url')
    l_0_run_id = resolve('run_id')
    l_0_targets = resolve('targets')
    l_0_history = resolve('history')
    l_0_hits = l_0_verdicts = l_0_facts = missing
    try:
        t_3 = environment.filters['list']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'list' found.")
    try:
        t_4 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_5 = environment.filters['pretty']
    except KeyError:
        @internalcode
        def t_5(*unused):
            raise TemplateRuntimeError("No filter named 'pretty' found.")
    try:
        t_6 = environment.filters['selectattr']
    except KeyError:
        @internalcode
        def t_6(*unused):
            raise TemplateRuntimeError("No filter named 'selectattr' found.")
    try:
        t_7 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_7(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    try:
        t_8 = environment.filters['urlencode']
    except KeyError:
        @internalcode
        def t_8(*unused):
            raise TemplateRuntimeError("No filter named 'urlencode' found.")
    try:
        t_9 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_9(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    yield '<h1>Review <span class="meta">'
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'item_id'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'subject'))
    yield ' · '
    yield escape(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'task'))
    yield ' · as <b>'
    yield escape((undefined(name='reviewer') if l_0_reviewer is missing else l_0_reviewer))
    yield '</b></span></h1>\n<p class="meta"><a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), (undefined(name='queue_url') if l_0_queue_url is missing else l_0_queue_url), _block_vars=_block_vars))
    yield '">back to the queue</a> · <a href="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/runs/', (undefined(name='run_id') if l_0_run_id is missing else l_0_run_id), '/item?', t_8({'subject': environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'subject'), 'task': environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'task'), 'item': environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'item_id')}), )), _block_vars=_block_vars))
    yield '">the item\'s page</a></p>\n<h3>Input</h3><pre class="input">'
    yield escape(t_5(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'input')))
    yield '</pre>\n<h3>Expected</h3><pre class="expected">'
    yield escape(t_5(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'expected')))
    yield '</pre>\n'
    l_0_hits = t_3(context.eval_ctx, t_6(context, (undefined(name='targets') if l_0_targets is missing else l_0_targets), 'kind', 'equalto', 'hit'))
    _block_vars['hits'] = l_0_hits
    if (undefined(name='hits') if l_0_hits is missing else l_0_hits):
        pass
        yield '<h3>Ranked hits</h3><div class="scroll"><table class="review-hits"><thead><tr><th class="num">rank</th><th>memory</th><th>text</th><th class="num">recorded grade</th><th>your grade</th><th>labels</th></tr></thead><tbody>\n'
        for l_1_t in (undefined(name='hits') if l_0_hits is missing else l_0_hits):
            l_1_own = resolve('own')
            l_1_hidden = resolve('hidden')
            l_1_others = resolve('others')
            l_1_mine = missing
            _loop_vars = {}
            pass
            l_1_mine = context.call((undefined(name='own') if l_1_own is missing else l_1_own), l_1_t, _loop_vars=_loop_vars)
            _loop_vars['mine'] = l_1_mine
            yield '<tr id="hit-'
            yield escape(environment.getattr(l_1_t, 'target'))
            yield '"><td class="num">'
            yield escape(environment.getattr(environment.getattr(l_1_t, 'extra'), 'rank'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'target'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_t, 'text'))
            yield '</td><td class="num">'
            yield escape((environment.getattr(l_1_t, 'machine') if (not t_9(environment.getattr(l_1_t, 'machine'))) else ''))
            yield '</td>\n<td><form method="post" action="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/review/label', _loop_vars=_loop_vars))
            yield '" class="label-form hit-form">'
            yield escape(context.call((undefined(name='hidden') if l_1_hidden is missing else l_1_hidden), 'hit', environment.getattr(l_1_t, 'target'), _loop_vars=_loop_vars))
            for l_2_g in ['0', '1', '2', '3']:
                _loop_vars = {}
                pass
                yield '<label><input type="radio" name="grade" value="'
                yield escape(l_2_g)
                yield '"'
                if ((undefined(name='mine') if l_1_mine is missing else l_1_mine) and (environment.getattr((undefined(name='mine') if l_1_mine is missing else l_1_mine), 'value') == l_2_g)):
                    pass
                    yield ' checked'
                yield '>'
                yield escape(l_2_g)
                yield '</label>'
            l_2_g = missing
            yield ' <button type="submit" name="save" value="1">grade</button></form></td>\n<td>'
            yield escape(context.call((undefined(name='others') if l_1_others is missing else l_1_others), l_1_t, _loop_vars=_loop_vars))
            yield '</td></tr>'
        l_1_t = l_1_own = l_1_mine = l_1_hidden = l_1_others = missing
        yield '</tbody></table></div>'
    if (not (undefined(name='hits') if l_0_hits is missing else l_0_hits)):
        pass
        yield '<h3>Output</h3><pre class="output">'
        yield escape(t_5(environment.getattr((undefined(name='it') if l_0_it is missing else l_0_it), 'output')))
        yield '</pre>'
    l_0_verdicts = t_3(context.eval_ctx, t_6(context, (undefined(name='targets') if l_0_targets is missing else l_0_targets), 'kind', 'equalto', 'verdict'))
    _block_vars['verdicts'] = l_0_verdicts
    if (undefined(name='verdicts') if l_0_verdicts is missing else l_0_verdicts):
        pass
        yield '<h3>Verdicts</h3>\n'
        for l_1_t in (undefined(name='verdicts') if l_0_verdicts is missing else l_0_verdicts):
            l_1_own = resolve('own')
            l_1_hidden = resolve('hidden')
            l_1_others = resolve('others')
            l_1_mine = missing
            _loop_vars = {}
            pass
            l_1_mine = context.call((undefined(name='own') if l_1_own is missing else l_1_own), l_1_t, _loop_vars=_loop_vars)
            _loop_vars['mine'] = l_1_mine
            yield '<div class="verdict '
            yield escape(environment.getattr(l_1_t, 'machine'))
            yield '" id="verdict-'
            yield escape(environment.getattr(l_1_t, 'target'))
            yield '">\n<p><b>'
            yield escape(environment.getattr(l_1_t, 'target'))
            yield '</b>: <span class="'
            yield escape(environment.getattr(l_1_t, 'machine'))
            yield '">'
            yield escape(environment.getattr(l_1_t, 'machine'))
            yield '</span>'
            if (not t_9(environment.getattr(environment.getattr(l_1_t, 'extra'), 'value'))):
                pass
                yield ' ('
                yield escape(t_4(environment.getattr(environment.getattr(l_1_t, 'extra'), 'value')))
                yield ')'
            yield '</p>\n'
            if environment.getattr(l_1_t, 'text'):
                pass
                yield '<p class="reason">'
                yield escape(environment.getattr(l_1_t, 'text'))
                yield '</p>'
            yield '<form method="post" action="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/review/label', _loop_vars=_loop_vars))
            yield '" class="label-form verdict-form">'
            yield escape(context.call((undefined(name='hidden') if l_1_hidden is missing else l_1_hidden), 'verdict', environment.getattr(l_1_t, 'target'), _loop_vars=_loop_vars))
            yield '\n<label>note <input type="text" name="note" value="'
            yield escape((environment.getattr((undefined(name='mine') if l_1_mine is missing else l_1_mine), 'note') if (undefined(name='mine') if l_1_mine is missing else l_1_mine) else ''))
            yield '" size="40"></label>\n<button type="submit" name="action" value="confirm">confirm '
            yield escape(environment.getattr(l_1_t, 'machine'))
            yield '</button>\n<button type="submit" name="action" value="override">override: '
            yield escape(('fail' if (environment.getattr(l_1_t, 'machine') == 'pass') else 'pass'))
            yield '</button></form>\n<p>'
            yield escape(context.call((undefined(name='others') if l_1_others is missing else l_1_others), l_1_t, _loop_vars=_loop_vars))
            yield '</p></div>'
        l_1_t = l_1_own = l_1_mine = l_1_hidden = l_1_others = missing
    l_0_facts = t_3(context.eval_ctx, t_6(context, (undefined(name='targets') if l_0_targets is missing else l_0_targets), 'kind', 'equalto', 'fact'))
    _block_vars['facts'] = l_0_facts
    if (undefined(name='facts') if l_0_facts is missing else l_0_facts):
        pass
        yield '<h3>Extracted facts</h3><div class="scroll"><table class="review-facts"><thead><tr><th>fact</th><th>scorer</th><th>your label</th><th>labels</th></tr></thead><tbody>\n'
        for l_1_t in (undefined(name='facts') if l_0_facts is missing else l_0_facts):
            l_1_hidden = resolve('hidden')
            l_1_labels = resolve('labels')
            l_1_others = resolve('others')
            _loop_vars = {}
            pass
            yield '<tr id="fact-'
            yield escape(environment.getattr(l_1_t, 'target'))
            yield '"><td>'
            yield escape(environment.getattr(l_1_t, 'text'))
            yield '</td><td>'
            yield escape((environment.getattr(l_1_t, 'machine') or ''))
            yield '</td>\n<td><form method="post" action="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/review/label', _loop_vars=_loop_vars))
            yield '" class="label-form fact-form">'
            yield escape(context.call((undefined(name='hidden') if l_1_hidden is missing else l_1_hidden), 'fact', environment.getattr(l_1_t, 'target'), _loop_vars=_loop_vars))
            yield '<input type="text" name="note" placeholder="note" size="20">'
            for l_2_v in environment.getitem((undefined(name='labels') if l_1_labels is missing else l_1_labels), 'fact'):
                _loop_vars = {}
                pass
                yield ' <button type="submit" name="label" value="'
                yield escape(l_2_v)
                yield '">'
                yield escape(l_2_v)
                yield '</button>'
            l_2_v = missing
            yield '</form></td>\n<td>'
            yield escape(context.call((undefined(name='others') if l_1_others is missing else l_1_others), l_1_t, _loop_vars=_loop_vars))
            yield '</td></tr>'
        l_1_t = l_1_hidden = l_1_labels = l_1_others = missing
        yield '</tbody></table></div>'
    def t_10(fiter):
        for l_1_t in fiter:
            if (environment.getattr(l_1_t, 'kind') == 'operation'):
                yield l_1_t
    for l_1_t in t_10((undefined(name='targets') if l_0_targets is missing else l_0_targets)):
        l_1_hidden = resolve('hidden')
        l_1_labels = resolve('labels')
        l_1_others = resolve('others')
        _loop_vars = {}
        pass
        yield '<h3>Operation decision</h3><div class="verdict" id="operation-">\n<p><b>'
        yield escape(environment.getattr(l_1_t, 'text'))
        yield '</b> · operation checks: '
        yield escape((environment.getattr(l_1_t, 'machine') or 'n/a'))
        if environment.getattr(environment.getattr(l_1_t, 'extra'), 'reason'):
            pass
            yield ' <span class="reason">('
            yield escape(environment.getattr(environment.getattr(l_1_t, 'extra'), 'reason'))
            yield ')</span>'
        yield '</p>\n<form method="post" action="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/review/label', _loop_vars=_loop_vars))
        yield '" class="label-form operation-form">'
        yield escape(context.call((undefined(name='hidden') if l_1_hidden is missing else l_1_hidden), 'operation', '', _loop_vars=_loop_vars))
        yield '<input type="text" name="note" placeholder="note" size="30">'
        for l_2_v in environment.getitem((undefined(name='labels') if l_1_labels is missing else l_1_labels), 'operation'):
            _loop_vars = {}
            pass
            yield ' <button type="submit" name="label" value="'
            yield escape(l_2_v)
            yield '">'
            yield escape(l_2_v)
            yield ' decision</button>'
        l_2_v = missing
        yield '</form>\n<p>'
        yield escape(context.call((undefined(name='others') if l_1_others is missing else l_1_others), l_1_t, _loop_vars=_loop_vars))
        yield '</p></div>'
    l_1_t = l_1_hidden = l_1_labels = l_1_others = missing
    if (not (undefined(name='targets') if l_0_targets is missing else l_0_targets)):
        pass
        yield '<p class="meta">Nothing on this item to label: no ranked hits, pass/fail verdict, extracted fact or operation decision.</p>'
    if (undefined(name='history') if l_0_history is missing else l_0_history):
        pass
        yield '<h3>History</h3><div class="scroll"><table class="review-history"><thead><tr><th>when</th><th>reviewer</th><th>what</th><th>label</th><th>machine</th><th>note</th></tr></thead><tbody>\n'
        for l_1_lab in (undefined(name='history') if l_0_history is missing else l_0_history):
            _loop_vars = {}
            pass
            yield '<tr><td>'
            yield escape(t_7(environment.getattr(l_1_lab, 'created_at')))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_lab, 'reviewer'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_lab, 'kind'))
            yield ' '
            yield escape(environment.getattr(l_1_lab, 'target'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_lab, 'value'))
            yield '</td><td>'
            yield escape((environment.getattr(l_1_lab, 'machine') or ''))
            yield '</td><td class="reason">'
            yield escape(environment.getattr(l_1_lab, 'note'))
            yield '</td></tr>'
        l_1_lab = missing
        yield '</tbody></table></div>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&3=16&4=46&2=77&5=89&6=148&7=156&8=160&9=162&10=164&11=166&12=169&13=189&14=206&16=210&17=215&18=217&19=220&20=234&21=246&22=252&23=256&24=258&25=260&26=262&27=265&28=267&29=270&30=283&31=297&33=301&34=312&35=321&36=335&37=338&38=341&39=344'
