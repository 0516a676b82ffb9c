"""Pages for people: a replay as a page to step through, a league as a report page, a replay as text.

Every page is one self-contained HTML file (styles, scripts and data inline; no server, no network, no CDN),
rendered from replays and the league store by html.document and the assets of this package; a class's
pages (class_pages) from its grades.

May import: referee, league/, ratings/, classroom/ (grades, to show them) and the modules at the top of
tournaments/. Not bench/ or cli/.
"""
