"""The one base of the errors this package raises for a person to act on.

Every refusal (an option that cannot be used, a file or record that cannot be read, a machine
that lacks something) is a :class:`SpeechDrameError` of one of three kinds. The command line
(``speech-drame`` and ``train.py``) prints its message as one ``error:`` line and exits with the
kind's :attr:`~SpeechDrameError.exit_code`; library callers catch the base or a kind.

- :class:`UsageError`: options or arguments that cannot be used as given (fix the command);
- :class:`InputError`: a file, record or field that cannot be used (fix the data);
- :class:`SetupError`: the machine or account lacks something: a package, a model, a token,
  an endpoint (fix the setup); :class:`HubAccessError` is the one of a Hub push.

:class:`UsageError` and :class:`InputError` are also :class:`ValueError`, as the errors they
replaced were, so existing ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "HubAccessError",
    "InputError",
    "SetupError",
    "SpeechDrameError",
    "UsageError",
]

# All kinds exit 2 today, the status argparse gives a usage error; the table is the one place
# to change that.
EXIT_CODES = {"usage": 2, "input": 2, "setup": 2}


class SpeechDrameError(Exception):
    """A refusal with a one-line message that says what to change."""

    kind = "input"

    @property
    def exit_code(self) -> int:
        """The command line's exit status for this error."""
        return EXIT_CODES[self.kind]


class UsageError(SpeechDrameError, ValueError):
    """Options or arguments that cannot be used as given."""

    kind = "usage"


class InputError(SpeechDrameError, ValueError):
    """A file, record or field that cannot be used; the message names it."""

    kind = "input"


class SetupError(SpeechDrameError):
    """The machine or account lacks something the work needs (a package, model, token, endpoint)."""

    kind = "setup"


class HubAccessError(SetupError, ValueError):
    """A Hub push that cannot happen as configured: offline, no token or a read-only one, a
    namespace the token may not write, an unreachable endpoint (also a :class:`ValueError`, as
    the CLI's push options caught it)."""
