from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'optimizations.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_status = missing
    pass
    parent_template = environment.get_template('base.html', 'optimizations.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    included_template = environment.get_template('_macros.html', 'optimizations.html')._get_default_module(context)
    l_0_status = getattr(included_template, 'status', missing)
    if l_0_status is missing:
        l_0_status = undefined(f"the template {included_template.__name__!r} (imported on line 2 in 'optimizations.html') does not export the requested name 'status'", name='status')
    context.vars['status'] = l_0_status
    context.exported_vars.discard('status')
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Optimizations'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_studies = resolve('studies')
    try:
        t_1 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_2 = environment.filters['signed']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'signed' found.")
    try:
        t_3 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    pass
    yield '<h1>Optimizations</h1>\n'
    if (not (undefined(name='studies') if l_0_studies is missing else l_0_studies)):
        pass
        yield '<p class="meta">No optimization yet: <code>memgauge optimize SUITE</code>.</p>'
    else:
        pass
        yield '<p class="meta">Newest first. Each candidate of a study is an ordinary run; the held-out score compares the best with the starting configuration on items no candidate was tuned on.</p>\n<div class="scroll"><table id="optimizations"><thead><tr><th>optimization</th><th>suite</th><th>subject</th><th>objective</th><th>strategy</th><th>status</th><th class="num">iterations</th><th class="num">held-out best</th><th class="num">baseline</th><th>Δ 95% CI</th><th>started</th></tr></thead><tbody>\n'
        for l_1_st in (undefined(name='studies') if l_0_studies is missing else l_0_studies):
            l_1_url = resolve('url')
            l_1_status = resolve('status')
            l_1_ci = resolve('ci')
            _loop_vars = {}
            pass
            yield '<tr><td><a class="study-link" href="'
            yield escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), markup_join(('/optimizations/', environment.getattr(l_1_st, 'study_id'), )), _loop_vars=_loop_vars))
            yield '">'
            yield escape(environment.getattr(l_1_st, 'study_id'))
            yield '</a></td><td>'
            yield escape(environment.getattr(l_1_st, 'suite_name'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_st, 'subject'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_st, 'task'))
            yield '/'
            yield escape(environment.getattr(l_1_st, 'measure'))
            yield '</td><td>'
            yield escape(environment.getattr(l_1_st, 'strategy'))
            yield '</td><td>'
            yield escape(context.call((undefined(name='status') if l_1_status is missing else l_1_status), environment.getattr(l_1_st, 'status'), _loop_vars=_loop_vars))
            if environment.getattr(l_1_st, 'stopped_because'):
                pass
                yield ' <span class="meta">'
                yield escape(environment.getattr(l_1_st, 'stopped_because'))
                yield '</span>'
            yield '</td><td class="num">'
            yield escape(environment.getattr(l_1_st, 'n_iterations'))
            yield '</td>\n'
            if environment.getattr(l_1_st, 'holdout'):
                pass
                yield '<td class="num">'
                yield escape(t_1(environment.getattr(environment.getattr(l_1_st, 'holdout'), 'best')))
                yield '</td><td class="num">'
                yield escape(t_1(environment.getattr(environment.getattr(l_1_st, 'holdout'), 'baseline')))
                yield '</td><td class="num">'
                yield escape(t_2(environment.getattr(environment.getattr(l_1_st, 'holdout'), 'delta')))
                yield ' '
                yield escape(context.call((undefined(name='ci') if l_1_ci is missing else l_1_ci), environment.getattr(environment.getattr(l_1_st, 'holdout'), 'ci_low'), environment.getattr(environment.getattr(l_1_st, 'holdout'), 'ci_high'), _loop_vars=_loop_vars))
                yield '</td>'
            else:
                pass
                yield '<td class="num na" colspan="3">no holdout</td>'
            yield '<td>'
            yield escape(t_3(environment.getattr(l_1_st, 'created_at')))
            yield '</td></tr>'
        l_1_st = l_1_url = l_1_status = l_1_ci = missing
        yield '</tbody></table></div>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=13&2=16&3=24&4=34&6=62&9=68&10=98&11=113'
