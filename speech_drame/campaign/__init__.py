"""Human rating campaigns (``speech-drame campaign``): collect Speech-DRAME ratings in a browser.

- :mod:`.records`: the plain values shared by the parts below;
- :mod:`.intake`: the clips (and attention-check gold clips) a campaign is created from;
- :mod:`.store`: the campaign database (SQLite file or PostgreSQL): raters, task assignment,
  ratings;
- :mod:`.forms`: the rating page's rubric and answer validation;
- :mod:`.assign`: the assignment rules (which clip a rater gets next);
- :mod:`.attach`: a scorer attached to the campaign, every clip scored once;
- :mod:`.evaluator_agreement`: the attached scorers against the ratings, beside the ceiling;
- :mod:`.stats`: progress, agreement, human ceiling, rater consistency and the scorers' part;
- :mod:`.export`: the ratings as an EvalBench release;
- :mod:`.server`: the rating web server.

Nothing here is imported by the core: the store and server need the ``campaign`` extra.
"""
