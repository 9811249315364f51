from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_shapes.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_p = resolve('p')
    l_0_shape = missing
    try:
        t_1 = environment.filters['cell']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'cell' found.")
    try:
        t_2 = environment.filters['trim']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'trim' found.")
    try:
        t_3 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    def macro(l_1_s):
        t_4 = []
        l_1_grid = resolve('grid')
        l_1_shape_chart = resolve('shape_chart')
        l_1_g = l_1_chart = missing
        if l_1_s is missing:
            l_1_s = undefined("parameter 's' was not provided", name='s')
        pass
        l_1_g = context.call((undefined(name='grid') if l_1_grid is missing else l_1_grid), l_1_s)
        t_4.extend((
            '<h3>',
            escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'title')),
            '</h3>',
        ))
        if environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'note'):
            pass
            t_4.extend((
                '<p class="meta">',
                escape(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'note')),
                '</p>',
            ))
        t_4.append(
            '<div class="scroll"><table class="shape"',
        )
        if environment.getattr(l_1_s, 'key'):
            pass
            t_4.extend((
                ' id="',
                escape(environment.getattr(l_1_s, 'key')),
                '"',
            ))
        t_4.append(
            '><thead><tr>',
        )
        for l_2_c in environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'columns'):
            _loop_vars = {}
            pass
            t_4.extend((
                '<th>',
                escape(l_2_c),
                '</th>',
            ))
        l_2_c = missing
        t_4.append(
            '</tr></thead><tbody>\n',
        )
        l_2_loop = missing
        for l_2_row, l_2_loop in LoopContext(environment.getattr((undefined(name='g') if l_1_g is missing else l_1_g), 'rows'), undefined):
            _loop_vars = {}
            pass
            t_4.append(
                '<tr>',
            )
            l_3_loop = missing
            for l_3_c, l_3_loop in LoopContext(l_2_row, undefined):
                l_3_na = l_3_tag = l_3_cls = missing
                _loop_vars = {}
                pass
                l_3_na = (t_3(environment.getattr(l_3_c, 'text')) and t_3(environment.getattr(l_3_c, 'value')))
                _loop_vars['na'] = l_3_na
                l_3_tag = ('th' if environment.getattr(l_3_loop, 'first') else 'td')
                _loop_vars['tag'] = l_3_tag
                l_3_cls = markup_join((('num' if t_3(environment.getattr(l_3_c, 'text')) else ''), (' ok' if environment.getattr(l_3_c, 'met') else (' bad' if (environment.getattr(l_3_c, 'met') == False) else '')), (' na' if (undefined(name='na') if l_3_na is missing else l_3_na) else ''), ))
                _loop_vars['cls'] = l_3_cls
                t_4.extend((
                    '<',
                    escape((undefined(name='tag') if l_3_tag is missing else l_3_tag)),
                ))
                if (undefined(name='cls') if l_3_cls is missing else l_3_cls):
                    pass
                    t_4.extend((
                        ' class="',
                        escape(t_2((undefined(name='cls') if l_3_cls is missing else l_3_cls))),
                        '"',
                    ))
                if ((environment.getattr(l_3_c, 'note') and (not (undefined(name='na') if l_3_na is missing else l_3_na))) and t_3(environment.getattr(l_3_c, 'text'))):
                    pass
                    t_4.extend((
                        ' title="',
                        escape(environment.getattr(l_3_c, 'note')),
                        '"',
                    ))
                t_4.extend((
                    '>',
                    escape(t_1(l_3_c)),
                ))
                if (environment.getattr(l_3_c, 'note') and ((undefined(name='na') if l_3_na is missing else l_3_na) or (not t_3(environment.getattr(l_3_c, 'text'))))):
                    pass
                    t_4.extend((
                        '<div class="meta ',
                        escape(('why-na' if (undefined(name='na') if l_3_na is missing else l_3_na) else 'definition')),
                        '">',
                        escape(environment.getattr(l_3_c, 'note')),
                        '</div>',
                    ))
                t_4.extend((
                    '</',
                    escape((undefined(name='tag') if l_3_tag is missing else l_3_tag)),
                    '>',
                ))
            l_3_loop = l_3_c = l_3_na = l_3_tag = l_3_cls = missing
            t_4.append(
                '</tr>',
            )
        l_2_loop = l_2_row = missing
        t_4.append(
            '</tbody></table></div>',
        )
        l_1_chart = context.call((undefined(name='shape_chart') if l_1_shape_chart is missing else l_1_shape_chart), l_1_s)
        if (undefined(name='chart') if l_1_chart is missing else l_1_chart):
            pass
            t_4.append(
                escape((undefined(name='chart') if l_1_chart is missing else l_1_chart)),
            )
        return concat(t_4)
    context.exported_vars.add('shape')
    context.vars['shape'] = l_0_shape = Macro(environment, macro, 'shape', ('s',), False, False, False, context.eval_ctx.autoescape)
    for l_1_sec in environment.getattr((undefined(name='p') if l_0_p is missing else l_0_p), 'sections'):
        _loop_vars = {}
        pass
        yield '<section class="aggregate" id="'
        yield escape(environment.getattr(l_1_sec, 'aggregate'))
        yield '-'
        yield escape(environment.getattr(l_1_sec, 'task'))
        yield '"><h2>'
        yield escape(environment.getattr(l_1_sec, 'title'))
        yield '</h2>\n<p class="meta">task '
        yield escape(environment.getattr(l_1_sec, 'task'))
        yield ' · aggregate '
        yield escape(environment.getattr(l_1_sec, 'aggregate'))
        yield '</p>\n'
        for l_2_s in environment.getattr(l_1_sec, 'shapes'):
            _loop_vars = {}
            pass
            yield escape(context.call((undefined(name='shape') if l_0_shape is missing else l_0_shape), l_2_s, _loop_vars=_loop_vars))
        l_2_s = missing
        yield '</section>\n'
    l_1_sec = missing

blocks = {}
debug_info = '1=31&2=55&3=78&4=139&5=148&6=158&7=162'
