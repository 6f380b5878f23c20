"""The Hub concern in one place: references, fetches, pushes and cards.

- :mod:`.refs`: the one parser of ``ORG/NAME[@REVISION]`` and ``hf://datasets|models|spaces/...``
  (:class:`~.refs.HubRef`);
- :mod:`.fetch`: snapshots of a dataset or a LiteScorer repo, single files of a model repo;
- :mod:`.access`: the token of a push, checked before the long work
  (:class:`~speech_drame.errors.HubAccessError` when it cannot happen);
- :mod:`.push`: :func:`~.push.push_folder` (listing, dry run, one commit) and the file list of
  the metric Space;
- :mod:`.cards`: the model cards of a DRAME-Eval evaluator and of a LiteScorer.

What knows a folder's content (a built dataset, a LiteScorer's training report, a DRAME-Eval
export, a Space bundle) stays with its owner (:mod:`speech_drame.data.push`, ...) and calls :func:`~.push.push_folder`. Names are imported on first use.
"""

from .._lazy import lazy_attributes

__all__ = [
    "HubAccessError",
    "HubRef",
    "check_push_access",
    "fetch_dataset",
    "fetch_file",
    "fetch_lite_scorer",
    "is_repo_id",
    "parse_ref",
    "parse_url",
    "push_folder",
    "render_lite_model_card",
    "render_model_card",
]
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "HubAccessError": "..errors",
        "HubRef": ".refs",
        "check_push_access": ".access",
        "fetch_dataset": ".fetch",
        "fetch_file": ".fetch",
        "fetch_lite_scorer": ".fetch",
        "is_repo_id": ".refs",
        "parse_ref": ".refs",
        "parse_url": ".refs",
        "push_folder": ".push",
        "render_lite_model_card": ".cards",
        "render_model_card": ".cards",
    },
)
