"""End to end in a real headless Chromium (Selenium): a reviewer labels a small sequential audit to
its certificate with the keyboard, reloads mid-way and resumes; the store holds exactly the labels
given, and a request without the token is refused. A ``rankcut review`` of a few records is
screened to its certificate the same way.

Skips, with its reason, only when no Chromium or chromedriver can be found (``.ci/run`` installs
Debian's ``chromium`` and ``chromium-driver``). With ``RANKCUT_SCREENSHOTS=docs/img`` it saves the
labelling and result pages as ``serve-label.png`` and ``serve-result.png`` there (docs/serve.md),
and the review's page as ``review-label.png``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from serve_testdata import SmallAudit  # noqa: E402

from rankcut.audit.labels import LabelStore  # noqa: E402
from rankcut.serve.app import create_app  # noqa: E402

TOKEN = "browser-test-token"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _executables() -> tuple[str, str]:
    browser = next((p for p in map(shutil.which, BROWSERS) if p), None)
    driver = shutil.which("chromedriver") or next(
        (p for p in ("/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver") if os.path.exists(p)), None)
    if browser is None or driver is None:
        missing = "chromium" if browser is None else "chromedriver"
        pytest.skip(f"no headless browser here: {missing} not found "
                    "(apt-get install chromium chromium-driver)")
    return browser, driver


@pytest.fixture
def server(small: SmallAudit) -> Iterator[str]:
    """``rankcut serve`` of the small audit on a free port of 127.0.0.1, in a thread; its base URL."""
    yield from _serve(small.folder)


def _serve(folder: Path) -> Iterator[str]:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app(folder, TOKEN)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    binary, driver_path = _executables()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1000,820"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(20)
    yield driver
    driver.quit()


def _press(driver: webdriver.Chrome, key: str) -> None:
    """Press ``key`` on the page and wait for the next page, loaded (a key sent while a page is
    still loading fails in Chrome with "Node with given id does not belong to the document", seen
    on a loaded CI machine)."""
    def loaded(d: webdriver.Chrome) -> bool:
        return bool(d.execute_script("return document.readyState") == "complete")

    WebDriverWait(driver, 10).until(loaded)
    old = driver.find_element(By.TAG_NAME, "body")
    ActionChains(driver).send_keys(key).perform()
    WebDriverWait(driver, 10).until(ec.staleness_of(old))
    WebDriverWait(driver, 10).until(loaded)


def _shot(driver: webdriver.Chrome, name: str) -> None:
    folder = os.environ.get("RANKCUT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


def test_a_reviewer_labels_a_sequential_audit_to_its_certificate_with_the_keyboard(
        small: SmallAudit, server: str, browser: webdriver.Chrome) -> None:
    # without the token: refused, in the browser and to a bare request
    browser.get(f"{server}/")
    assert "access refused" in browser.find_element(By.TAG_NAME, "body").text
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{server}/result")
    assert refused.value.code == 403

    browser.get(f"{server}/?token={TOKEN}")
    assert "token" not in browser.current_url   # the token left the address bar
    browser.find_element(By.ID, "name").send_keys("Ada\n")
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "counts")))

    given: dict[tuple[str, str], int] = {}
    while "met after" not in browser.find_element(By.TAG_NAME, "header").text:
        item = (browser.find_element(By.CSS_SELECTOR, "#query code").text,
                browser.find_element(By.ID, "doc-id").text)
        assert browser.find_element(By.ID, "doc").text.startswith("Document ")
        label = int(item in small.relevant)
        _press(browser, "j" if label else "k")
        given[item] = label
        if len(given) == 5:   # reload mid-way: the page resumes where the store stands
            browser.refresh()
            assert browser.find_element(By.ID, "counts").text.startswith("5 labelled")
        if len(given) == 10:
            _shot(browser, "serve-label.png")
    assert len(given) == 12
    assert "target recall ≥ 0.5: met" in browser.find_element(By.ID, "bound").text
    _press(browser, "c")
    assert browser.current_url.endswith("/result")
    assert "met after 4 of 16 audit labels" in browser.find_element(By.ID, "verdict").text
    assert browser.find_element(By.ID, "certificate").get_attribute("href").endswith("/certificate.json")
    browser.set_window_size(1000, 1200)   # the whole result page, plot included
    _shot(browser, "serve-result.png")

    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert {(q, d): y for q, d, y in store.items()} == given
        assert len(store.history()) == len(given) and store.sources() == ["serve reviewer Ada"]


_TOPIC = ("migraine", "triptan", "headache", "serotonin", "aura", "sumatriptan")
_OTHER = ("kidney", "glucose", "transport", "cortex", "insulin", "membrane", "lithium", "calcium",
          "plasma", "steroid", "enzyme", "muscle", "bone", "liver")


def test_a_reviewer_screens_a_review_to_its_certificate_with_the_keyboard(
        tmp_path: Path, browser: webdriver.Chrome) -> None:
    from rankcut.review import session
    from rankcut.review.records import Records

    rng = np.random.default_rng(3)
    truth = {f"r{i}": int(i % 6 == 0) for i in range(90)}    # 15 relevant of 90
    words = [rng.choice(_TOPIC if y else _OTHER, size=3).tolist() + rng.choice(_OTHER, size=9).tolist()
             for y in truth.values()]
    records = Records("migraine-review", tuple(truth), tuple(f"Record {rid}" for rid in truth),
                      tuple(" ".join(w) for w in words))
    folder = tmp_path / "review"
    session.start(records, folder, target_recall=0.8, seed=5, policy="projected-cost:batch=10,chunk=5")
    served = _serve(folder)
    base = next(served)
    browser.get(f"{base}/?token={TOKEN}")
    browser.find_element(By.ID, "name").send_keys("Ada\n")
    WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.ID, "counts")))
    header = browser.find_element(By.TAG_NAME, "header").text
    assert header.startswith("rankcut · review ") and "90 records of migraine-review" in header
    moves = set()
    while "met after" not in browser.find_element(By.TAG_NAME, "header").text:
        place = browser.find_element(By.ID, "place").text
        moves.add(place.split(" · ")[0])
        assert re.match(r"(screen · the ranker's pick, number [\d,]+ in the file|audit · the next of the "
                        r"frozen random order, audit order position [\d,]+, number [\d,]+ in the file)$",
                        place), place
        assert not browser.find_elements(By.ID, "query")
        rid = browser.find_element(By.ID, "doc-id").text
        assert browser.find_element(By.ID, "doc").text.startswith(f"Record {rid}")
        _press(browser, "j" if truth[rid] else "k")
        if len(moves) == 1 and session.status(folder)["read"] == 12:
            _shot(browser, "review-label.png")
    assert moves == {"screen", "audit"}
    _press(browser, "c")
    assert "found at least" in browser.find_element(By.ID, "certificates").text
    info = session.status(folder)
    assert info["recall_bound"] >= 0.8 and info["next_record"] is None
    with LabelStore(folder / "labels.sqlite", create=False) as store:
        assert all(truth[d] == y for _, d, y in store.items()) and store.sources() == ["serve reviewer Ada"]
    next(served, None)   # stop the server


def test_it_skips_only_when_no_browser_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    with pytest.raises(pytest.skip.Exception, match="chromium not found"):
        _executables()
