"""The one thing pyproject.toml cannot say (the project itself is declared there): two top-level
folders ship inside the package, from where they are kept, with no copy in the checkout.

- ``model_card/`` (the card templates) as ``speech_drame/templates/model_card/``
  (read by :mod:`speech_drame.templates`);
- ``evaluate_metric/drame_metric/drame_metric.py`` (the ``evaluate`` module) as
  ``speech_drame/evaluate_metric/drame_metric/drame_metric.py``
  (registered by ``speech-drame install-metric``).
"""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["speech_drame*"]),
        "speech_drame.templates.model_card",
    ],
    package_dir={
        "speech_drame.templates.model_card": "model_card",
        "speech_drame.evaluate_metric.drame_metric": "evaluate_metric/drame_metric",
    },
    py_modules=["speech_drame.evaluate_metric.drame_metric.drame_metric"],
)
