from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'base.html'

def root(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_standalone = resolve('standalone')
    l_0_css = resolve('css')
    l_0_url = resolve('url')
    l_0_nav = resolve('nav')
    l_0_live = resolve('live')
    l_0_self_url = resolve('self_url')
    pass
    yield '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    if (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone):
        pass
        yield '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">\n<style>'
        yield escape((undefined(name='css') if l_0_css is missing else l_0_css))
        yield '</style>\n'
    else:
        pass
        yield '<meta name="htmx-config" content=\'{"allowEval":false,"allowScriptTags":false,"includeIndicatorStyles":false,"historyCacheSize":0}\'>\n<link rel="stylesheet" href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/static/style.css'))
        yield '">\n<script src="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/static/htmx.min.js'))
        yield '"></script>\n'
    yield '<title>'
    yield from context.blocks['title'][0](context)
    yield ' · memgauge</title>\n</head>\n<body>\n<header class="top">\n'
    if (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone):
        pass
        yield '<span class="brand">memgauge report</span>'
    else:
        pass
        yield '<a class="brand" href="'
        yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), '/'))
        yield '">memgauge</a>\n'
        for (l_1_label, l_1_path) in (undefined(name='nav') if l_0_nav is missing else l_0_nav):
            _loop_vars = {}
            pass
            yield '<a href="'
            yield escape(context.call((undefined(name='url') if l_0_url is missing else l_0_url), l_1_path, _loop_vars=_loop_vars))
            yield '">'
            yield escape(l_1_label)
            yield '</a>'
        l_1_label = l_1_path = missing
    yield '</header>\n<main id="main"'
    if ((undefined(name='live') if l_0_live is missing else l_0_live) and (not (undefined(name='standalone') if l_0_standalone is missing else l_0_standalone))):
        pass
        yield ' hx-get="'
        yield escape((undefined(name='self_url') if l_0_self_url is missing else l_0_self_url))
        yield '" hx-trigger="every 2s" hx-select="#main" hx-target="this" hx-swap="outerHTML" data-live="1"'
    yield '>\n'
    yield from context.blocks['main'][0](context)
    yield '</main>\n</body>\n</html>'

def block_title(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'memgauge'

def block_main(context, missing=missing, environment=environment):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass

blocks = {'title': block_title, 'main': block_main}
debug_info = '6=18&8=21&11=26&12=28&14=31&18=33&19=39&20=41&23=51&24=57&14=60&24=70'
