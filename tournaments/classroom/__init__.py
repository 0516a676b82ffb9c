"""The classroom: checking one bot (check-bot and its text, JSON and Gradescope reports), grading a league's
bots, and the scaffolds and templates of new bots (new-bot).

May import: referee, league/, ratings/ and the modules at the top of tournaments/. Not pages/, bench/ or cli/.
"""
