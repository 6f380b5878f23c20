"""Human rating campaigns (``speech-drame campaign``): collect Speech-DRAME ratings in a browser.

- :mod:`.records`: the plain values shared by the parts below;
- :mod:`.intake`: the clips (and attention-check gold clips) a campaign is created from;
- :mod:`.store`: the campaign database (SQLite file or PostgreSQL): raters, task assignment,
  ratings;
- :mod:`.forms`: the rating page's rubric and answer validation;
- :mod:`.stats`: progress, agreement, human ceiling and rater consistency;
- :mod:`.export`: the ratings as an EvalBench release;
- :mod:`.server`: the rating web server.

Nothing here is imported by the core: the store and server need the ``campaign`` extra.
"""
