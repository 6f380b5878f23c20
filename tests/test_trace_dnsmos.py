"""Personalised DNSMOS (the released TRACE blueprint's P.835 model) against speechmos."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import LIBRIVOX

from speech_drame.audio import load_audio
from speech_drame.features import quality

SR = quality.SR
pytestmark = pytest.mark.skipif(
    not LIBRIVOX.is_dir(), reason="Debian package pocketsphinx-testdata is not installed"
)


def test_personalised_dnsmos_matches_speechmos_on_one_window():
    dnsmos_ref = pytest.importorskip("speechmos.dnsmos")
    x = np.concatenate([load_audio(p).samples for p in sorted(LIBRIVOX.glob("*.wav"))])
    x = x[: quality.WINDOW]
    ours = quality.dnsmos(load_audio((x, SR)), "personalised")
    ref = dnsmos_ref.run(x, SR, model_type="dnsmos_personalized")
    assert ours.sig == pytest.approx(ref["sig_mos"], abs=1e-4)
    assert ours.bak == pytest.approx(ref["bak_mos"], abs=1e-4)
    assert ours.ovrl == pytest.approx(ref["ovrl_mos"], abs=1e-4)
    assert ours.p808 == pytest.approx(ref["p808_mos"], abs=1e-3)
    plain = quality.dnsmos(load_audio((x, SR)))
    assert plain.p808 == pytest.approx(ours.p808, abs=1e-6)  # one P.808 model for both
    assert abs(plain.ovrl - ours.ovrl) > 0.05 and abs(plain.bak - ours.bak) > 0.05


def test_unknown_dnsmos_variant_is_refused():
    with pytest.raises(ValueError, match="unknown DNSMOS variant 'p835'; use one of plain, pers"):
        quality.dnsmos(load_audio((np.full(SR, 0.1, np.float32), SR)), "p835")  # type: ignore[arg-type]
