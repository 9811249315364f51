from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_macros.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_status = l_0_verdict_cell = l_0_kv = l_0_ci_cell = l_0_pager = missing
    try:
        t_1 = environment.filters['num']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'num' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_s):
        t_3 = []
        if l_1_s is missing:
            l_1_s = undefined("parameter 's' was not provided", name='s')
        pass
        t_3.extend((
            '<span class="badge ',
            escape(l_1_s),
            '">',
            escape(l_1_s),
            '</span>',
        ))
        return concat(t_3)
    context.exported_vars.add('status')
    context.vars['status'] = l_0_status = Macro(environment, macro, 'status', ('s',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_v):
        t_4 = []
        if l_1_v is missing:
            l_1_v = undefined("parameter 'v' was not provided", name='v')
        pass
        if t_2(l_1_v):
            pass
            t_4.append(
                '<span class="na">-</span>',
            )
        elif environment.getattr(l_1_v, 'error'):
            pass
            t_4.extend((
                '<span class="bad" title="',
                escape(environment.getattr(l_1_v, 'error')),
                '">error</span>',
            ))
        else:
            pass
            t_4.extend((
                '<span class="',
                escape(('pass' if environment.getattr(l_1_v, 'passed') else ('fail' if (environment.getattr(l_1_v, 'passed') == False) else ''))),
                '">',
                escape(t_1(environment.getattr(l_1_v, 'value'))),
            ))
            if (not t_2(environment.getattr(l_1_v, 'passed'))):
                pass
                t_4.extend((
                    ' ',
                    escape(('pass' if environment.getattr(l_1_v, 'passed') else 'fail')),
                ))
            t_4.append(
                '</span>',
            )
        return concat(t_4)
    context.exported_vars.add('verdict_cell')
    context.vars['verdict_cell'] = l_0_verdict_cell = Macro(environment, macro, 'verdict_cell', ('v',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_rows):
        t_5 = []
        if l_1_rows is missing:
            l_1_rows = undefined("parameter 'rows' was not provided", name='rows')
        pass
        t_5.append(
            '<div class="scroll"><table>',
        )
        for (l_2_k, l_2_v) in l_1_rows:
            _loop_vars = {}
            pass
            t_5.extend((
                '<tr><th>',
                escape(l_2_k),
                '</th><td>',
                escape(l_2_v),
                '</td></tr>',
            ))
        l_2_k = l_2_v = missing
        t_5.append(
            '</table></div>',
        )
        return concat(t_5)
    context.exported_vars.add('kv')
    context.vars['kv'] = l_0_kv = Macro(environment, macro, 'kv', ('rows',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_mean, l_1_lo, l_1_hi, l_1_n_scored, l_1_n_failed):
        t_6 = []
        l_1_ci = resolve('ci')
        if l_1_mean is missing:
            l_1_mean = undefined("parameter 'mean' was not provided", name='mean')
        if l_1_lo is missing:
            l_1_lo = undefined("parameter 'lo' was not provided", name='lo')
        if l_1_hi is missing:
            l_1_hi = undefined("parameter 'hi' was not provided", name='hi')
        if l_1_n_scored is missing:
            l_1_n_scored = undefined("parameter 'n_scored' was not provided", name='n_scored')
        if l_1_n_failed is missing:
            l_1_n_failed = undefined("parameter 'n_failed' was not provided", name='n_failed')
        pass
        if t_2(l_1_mean):
            pass
            t_6.extend((
                '<span class="na">n/a (',
                escape(l_1_n_scored),
                ' scored',
            ))
            if l_1_n_failed:
                pass
                t_6.extend((
                    ', ',
                    escape(l_1_n_failed),
                    ' failed',
                ))
            t_6.append(
                ')</span>',
            )
        else:
            pass
            t_6.extend((
                '<b>',
                escape(t_1(l_1_mean)),
                '</b> <span class="meta">',
                escape(context.call((undefined(name='ci') if l_1_ci is missing else l_1_ci), l_1_lo, l_1_hi)),
                '</span>',
            ))
        return concat(t_6)
    context.exported_vars.add('ci_cell')
    context.vars['ci_cell'] = l_0_ci_cell = Macro(environment, macro, 'ci_cell', ('mean', 'lo', 'hi', 'n_scored', 'n_failed'), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_p):
        t_7 = []
        if l_1_p is missing:
            l_1_p = undefined("parameter 'p' was not provided", name='p')
        pass
        if (environment.getattr(l_1_p, 'pages') > 1):
            pass
            t_7.append(
                '<p class="pager">',
            )
            if (environment.getattr(l_1_p, 'page') > 1):
                pass
                t_7.extend((
                    '<a href="',
                    escape(context.call(environment.getattr(l_1_p, 'url'), (environment.getattr(l_1_p, 'page') - 1))),
                    '">« previous</a>',
                ))
            t_7.extend((
                '<span>page ',
                escape(environment.getattr(l_1_p, 'page')),
                ' of ',
                escape(environment.getattr(l_1_p, 'pages')),
                '</span>',
            ))
            if (environment.getattr(l_1_p, 'page') < environment.getattr(l_1_p, 'pages')):
                pass
                t_7.extend((
                    '<a href="',
                    escape(context.call(environment.getattr(l_1_p, 'url'), (environment.getattr(l_1_p, 'page') + 1))),
                    '" id="next-page">next »</a>',
                ))
            t_7.append(
                '</p>',
            )
        return concat(t_7)
    context.exported_vars.add('pager')
    context.vars['pager'] = l_0_pager = Macro(environment, macro, 'pager', ('p',), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '1=24&2=39&3=44&4=49&5=60&7=76&8=101&9=115&10=136&12=144'
