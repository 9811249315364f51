from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'runs.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    l_0_m = l_0_run_row = missing
    try:
        t_1 = environment.filters['brief']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'brief' found.")
    try:
        t_2 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_3 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    pass
    parent_template = environment.get_template('base.html', 'runs.html')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    l_0_m = context.vars['m'] = environment.get_template('_macros.html', 'runs.html')._get_default_module(context)
    context.exported_vars.discard('m')
    def macro(l_1_r, l_1_candidate):
        t_4 = []
        l_1_url = resolve('url')
        if l_1_r is missing:
            l_1_r = undefined("parameter 'r' was not provided", name='r')
        if l_1_candidate is missing:
            l_1_candidate = False
        pass
        t_4.append(
            '<tr',
        )
        if l_1_candidate:
            pass
            t_4.extend((
                ' class="candidate" data-study="',
                escape(environment.getattr(l_1_r, 'study_id')),
                '"',
            ))
        t_4.append(
            '>\n<td class="nowrap">',
        )
        if l_1_candidate:
            pass
            t_4.append(
                '<span class="meta">↳ </span>',
            )
        t_4.extend((
            '<a class="run-link" href="',
            escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), markup_join(('/runs/', environment.getattr(l_1_r, 'run_id'), )))),
            '">',
            escape(environment.getattr(l_1_r, 'run_id')),
            '</a></td>\n<td>',
            escape(environment.getattr(l_1_r, 'suite')),
            '</td><td>',
            escape(environment.getattr(l_1_r, 'kind')),
            '</td><td>',
            escape(context.call(environment.getattr((undefined(name='m') if l_0_m is missing else l_0_m), 'status'), environment.getattr(l_1_r, 'status'))),
        ))
        if environment.getattr(l_1_r, 'reason'):
            pass
            t_4.extend((
                '<div class="meta">',
                escape(t_1(environment.getattr(l_1_r, 'reason'), 80)),
                '</div>',
            ))
        t_4.extend((
            '</td>\n<td>',
            escape(t_2(context.eval_ctx, environment.getattr(l_1_r, 'subjects'), ', ')),
            '</td><td>',
            escape(t_2(context.eval_ctx, environment.getattr(l_1_r, 'tasks'), ', ')),
            '</td>\n<td class="num">',
            escape(environment.getattr(l_1_r, 'n_items')),
            '</td><td class="num">',
            escape(environment.getattr(l_1_r, 'n_completed')),
            '</td><td class="num',
        ))
        if environment.getattr(l_1_r, 'n_failed'):
            pass
            t_4.append(
                ' bad',
            )
        t_4.extend((
            '">',
            escape(environment.getattr(l_1_r, 'n_failed')),
            '</td>\n<td class="nowrap">',
            escape(t_3((environment.getattr(l_1_r, 'started_at') or environment.getattr(l_1_r, 'created_at')))),
            '</td><td class="nowrap">',
            escape(environment.getattr(l_1_r, 'duration')),
            '</td>\n<td><a href="',
            escape(context.call((undefined(name='url') if l_1_url is missing else l_1_url), '/trends', suite=environment.getattr(l_1_r, 'suite'))),
            '">trend</a></td>\n</tr>',
        ))
        return concat(t_4)
    context.exported_vars.add('run_row')
    context.vars['run_row'] = l_0_run_row = Macro(environment, macro, 'run_row', ('r', 'candidate'), False, False, False, context.eval_ctx.autoescape)
    yield from parent_template.root_render_func(context)

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Runs'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_url = resolve('url')
    l_0_live_form = resolve('live_form')
    l_0_choices = resolve('choices')
    l_0_filters = resolve('filters')
    l_0_entries = resolve('entries')
    l_0_n_candidates = resolve('n_candidates')
    l_0_show = l_0_toggle = missing
    try:
        t_3 = environment.filters['ts']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'ts' found.")
    pass
    yield '<h1>Runs</h1>\n<form class="filters" method="get" action="'
    yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/', _block_vars=_block_vars))
    yield '"'
    yield escape((undefined(name='live_form') if l_0_live_form is missing else l_0_live_form))
    yield '>\n'
    for (l_1_name, l_1_label, l_1_values) in [('suite', 'suite', environment.getattr((undefined(name='choices') if l_0_choices is missing else l_0_choices), 'suite_name')), ('status', 'status', environment.getattr((undefined(name='choices') if l_0_choices is missing else l_0_choices), 'status')), ('kind', 'kind', environment.getattr((undefined(name='choices') if l_0_choices is missing else l_0_choices), 'kind'))]:
        _loop_vars = {}
        pass
        yield '<label>'
        yield escape(l_1_label)
        yield '<select name="'
        yield escape(l_1_name)
        yield '"><option value="">all</option>\n'
        for l_2_v in l_1_values:
            _loop_vars = {}
            pass
            yield '<option value="'
            yield escape(l_2_v)
            yield '"'
            if (environment.getitem((undefined(name='filters') if l_0_filters is missing else l_0_filters), l_1_name) == l_2_v):
                pass
                yield ' selected'
            yield '>'
            yield escape(l_2_v)
            yield '</option>'
        l_2_v = missing
        yield '</select></label>\n'
    l_1_name = l_1_label = l_1_values = missing
    yield '<label>optimizations\' candidate runs<select name="candidates"><option value="hide"'
    if (environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'candidates') == 'hide'):
        pass
        yield ' selected'
    yield '>hidden under their study</option><option value="show"'
    if (environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'candidates') == 'show'):
        pass
        yield ' selected'
    yield '>listed under their study</option></select></label>\n<button type="submit">filter</button>\n</form>\n'
    l_0_show = (environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'candidates') == 'show')
    _block_vars['show'] = l_0_show
    l_0_toggle = context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/', suite=environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'suite'), status=environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'status'), kind=environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'kind'), candidates=(None if (undefined(name='show') if l_0_show is missing else l_0_show) else 'show'), _block_vars=_block_vars)
    _block_vars['toggle'] = l_0_toggle
    if (not (undefined(name='entries') if l_0_entries is missing else l_0_entries)):
        pass
        yield '<p class="meta">No runs'
        if ((environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'suite') or environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'status')) or environment.getattr((undefined(name='filters') if l_0_filters is missing else l_0_filters), 'kind')):
            pass
            yield ' match these filters'
        else:
            pass
            yield ' yet: start one with <code>memgauge run SUITE</code>'
        yield '.</p>'
    else:
        pass
        if (undefined(name='n_candidates') if l_0_n_candidates is missing else l_0_n_candidates):
            pass
            yield '<p class="meta" id="candidates-note">Each optimization makes one run per candidate it tries: its '
            yield escape((undefined(name='n_candidates') if l_0_n_candidates is missing else l_0_n_candidates))
            yield ' candidate run'
            yield escape(('' if ((undefined(name='n_candidates') if l_0_n_candidates is missing else l_0_n_candidates) == 1) else 's'))
            yield ' '
            yield escape(('are' if ((undefined(name='n_candidates') if l_0_n_candidates is missing else l_0_n_candidates) != 1) else 'is'))
            yield ' '
            yield escape(('listed' if (undefined(name='show') if l_0_show is missing else l_0_show) else 'grouped'))
            yield ' under '
            yield escape(('its' if ((undefined(name='n_candidates') if l_0_n_candidates is missing else l_0_n_candidates) == 1) else 'their'))
            yield ' study. <a class="candidates-toggle" href="'
            yield escape((undefined(name='toggle') if l_0_toggle is missing else l_0_toggle))
            yield '">'
            yield escape(('hide' if (undefined(name='show') if l_0_show is missing else l_0_show) else 'show'))
            yield ' them</a></p>'
        yield '<div class="scroll"><table id="runs">\n<thead><tr><th>run</th><th>suite</th><th>kind</th><th>status</th><th>subjects</th><th>tasks</th><th class="num">items</th><th class="num">done</th><th class="num">failed</th><th>started (UTC)</th><th>duration</th><th></th></tr></thead>\n<tbody>\n'
        for l_1_e in (undefined(name='entries') if l_0_entries is missing else l_0_entries):
            l_1_g = resolve('g')
            l_1_m = resolve('m')
            l_1_run_row = resolve('run_row')
            _loop_vars = {}
            pass
            if (environment.getattr(l_1_e, 'kind') == 'study'):
                pass
                l_1_g = environment.getattr(l_1_e, 'row')
                _loop_vars['g'] = l_1_g
                yield '<tr class="study-group" data-study="'
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'study_id'))
                yield '"><td colspan="12">optimization <a class="study-link nowrap" href="'
                yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), markup_join(('/optimizations/', environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'study_id'), )), _loop_vars=_loop_vars))
                yield '">'
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'study_id'))
                yield '</a> '
                yield escape(context.call(environment.getattr((undefined(name='m') if l_1_m is missing else l_1_m), 'status'), environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'status'), _loop_vars=_loop_vars))
                yield '\n· suite '
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'suite'))
                yield ' · objective '
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'task'))
                yield '/'
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'measure'))
                yield ' · subject '
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'subject'))
                yield ' · '
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'strategy'))
                yield '\n· <b class="n-candidates">'
                yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_runs'))
                yield ' candidate run'
                yield escape(('' if (environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_runs') == 1) else 's'))
                yield '</b>'
                if environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_live'):
                    pass
                    yield ', '
                    yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_live'))
                    yield ' going'
                if environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_failed'):
                    pass
                    yield ', <span class="bad">'
                    yield escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'n_failed'))
                    yield ' failed</span>'
                yield ' ·\nnewest <span class="nowrap">'
                yield escape(t_3(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'created_at')))
                yield '</span></td></tr>\n'
                for l_2_r in environment.getattr(l_1_e, 'runs'):
                    _loop_vars = {}
                    pass
                    yield escape(context.call((undefined(name='run_row') if l_1_run_row is missing else l_1_run_row), l_2_r, True, _loop_vars=_loop_vars))
                l_2_r = missing
            else:
                pass
                yield escape(context.call((undefined(name='run_row') if l_1_run_row is missing else l_1_run_row), environment.getattr(l_1_e, 'row'), _loop_vars=_loop_vars))
        l_1_e = l_1_g = l_1_m = l_1_run_row = missing
        yield '</tbody></table></div>'

blocks = {'title': block_title, 'main': block_main}
debug_info = '1=31&3=36&4=57&5=68&6=83&7=87&8=101&9=105&2=113&11=123&13=145&14=149&15=153&16=157&18=173&21=181&22=183&23=185&24=197&28=215&29=226&30=234&31=244&32=259&33=261&34=268'
