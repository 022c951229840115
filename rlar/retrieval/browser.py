"""A pool of headless Chromium contexts driven through Playwright's async API.

Contract of :meth:`BrowserPool.visit`: it never raises for anything a web page does. It returns the page's
:class:`~rlar.retrieval.records.PageEvidence` (status ok | http_error | timeout | error | blocked, HTTP
status, elapsed time, screenshot path) and whatever the given extraction script returned (``None`` unless
the page loaded). Our own misuse (visiting before ``start()``) raises.

- Pool: ``contexts`` browser contexts (separate cookie jars), one page each at a time; ``visit`` waits for
  a free one, so at most ``contexts`` pages load at once.
- Timeouts: navigation waits for ``domcontentloaded`` up to ``page_timeout_s``; extraction and the
  screenshot share the same budget; a hard wall-clock cap around the whole visit catches anything that
  ignores Playwright's own timeouts. A page that never finishes loading comes back as ``timeout``.
- Pacing: at least ``min_interval_s`` between two navigations to the same host, across the pool.
- Containment: with ``restrict_hosts`` every request (sub-resources too) to a host outside the allowed
  set (and their subdomains) is aborted, and a ``visit`` to such a URL is refused as ``blocked``.
  ``block_resource_types`` (media, fonts) are never loaded.
- Crashes: if Chromium dies, the next ``visit`` relaunches it and rebuilds the pool.

Not covered: JavaScript challenges/CAPTCHAs, logins, robots.txt parsing (pacing and an identifying
user agent are the politeness we implement), downloads through the browser (weights go through
``rlar.retrieval.deploy``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from rlar.retrieval.config import BrowserConfig
from rlar.retrieval.records import PageEvidence

# playwright is imported where used: heavy and optional (rlar --help imports this module).

log = logging.getLogger("rlar.retrieval.browser")


def host_of(url: str) -> str:
    return (urlparse(url).hostname or "").lower()


class BrowserPool:
    """Chromium + a pool of contexts. Use ``async with BrowserPool(cfg, hosts) as pool`` or start/stop."""

    def __init__(self, cfg: BrowserConfig, allowed: Iterable[str] = ()) -> None:
        """``allowed``: hosts or URLs whose hosts pages may load from (with ``restrict_hosts``)."""
        self.cfg = cfg
        self.allowed_hosts: set[str] = set()
        self.allow(*allowed, *cfg.extra_hosts)
        self._pw: Any = None
        self._browser: Any = None
        self._contexts: asyncio.Queue[Any] | None = None
        self._all_contexts: list[Any] = []
        self._restart_lock = asyncio.Lock()
        self._host_locks: dict[str, asyncio.Lock] = {}
        self._host_next: dict[str, float] = {}
        self.visits = 0
        self.failures = 0
        self.launches = 0
        self.blocked_requests = 0
        self.navigations: deque[tuple[float, str]] = deque(maxlen=1000)  # (monotonic start, host)

    # -- lifecycle ----------------------------------------------------------------------------------
    async def start(self) -> BrowserPool:
        from playwright.async_api import async_playwright

        if self._pw is None:
            self._pw = await async_playwright().start()
        await self._launch()
        return self

    async def _launch(self) -> None:
        self._browser = await self._pw.chromium.launch(
            executable_path=self.cfg.executable_path, headless=self.cfg.headless, args=list(self.cfg.args)
        )
        self.launches += 1
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._all_contexts = []
        w, h = self.cfg.viewport
        for _ in range(self.cfg.contexts):
            ctx = await self._browser.new_context(
                user_agent=self.cfg.user_agent,
                viewport={"width": w, "height": h},
                accept_downloads=False,
                service_workers="block",
            )
            await ctx.route("**/*", self._route)
            self._all_contexts.append(ctx)
            queue.put_nowait(ctx)
        self._contexts = queue

    async def stop(self) -> None:
        for ctx in self._all_contexts:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ctx.close(), 5)
        self._all_contexts = []
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._browser.close(), 10)
            self._browser = None
        if self._pw is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pw.stop(), 10)
            self._pw = None
        self._contexts = None

    async def __aenter__(self) -> BrowserPool:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def allow(self, *urls_or_hosts: str) -> None:
        """Add hosts (or the hosts of URLs) to the allowed set."""
        for u in urls_or_hosts:
            host = host_of(u) if "://" in u else u.lower()
            if host:
                self.allowed_hosts.add(host)

    def is_allowed(self, url: str) -> bool:
        if not self.cfg.restrict_hosts:
            return True
        host = host_of(url)
        return any(host == h or host.endswith("." + h) for h in self.allowed_hosts)

    def info(self) -> dict[str, Any]:
        return {
            "contexts": self.cfg.contexts,
            "visits": self.visits,
            "failures": self.failures,
            "launches": self.launches,
            "connected": bool(self._browser is not None and self._browser.is_connected()),
        }

    # -- internals ----------------------------------------------------------------------------------
    async def _route(self, route: Any, request: Any) -> None:
        url = request.url
        if url.startswith(("data:", "blob:", "about:")):
            await route.continue_()
            return
        if not self.is_allowed(url) or request.resource_type in self.cfg.block_resource_types:
            self.blocked_requests += 1
            with contextlib.suppress(Exception):
                await route.abort("blockedbyclient")
            return
        with contextlib.suppress(Exception):
            await route.continue_()

    async def _ensure_browser(self) -> None:
        if self._pw is None:
            raise RuntimeError("BrowserPool.visit() before start()")
        if self._browser is not None and self._browser.is_connected():
            return
        async with self._restart_lock:
            if self._browser is not None and self._browser.is_connected():
                return
            log.warning("chromium is not connected; relaunching the browser pool")
            with contextlib.suppress(Exception):
                if self._browser is not None:
                    await asyncio.wait_for(self._browser.close(), 5)
            await self._launch()

    async def _pace(self, host: str) -> None:
        lock = self._host_locks.setdefault(host, asyncio.Lock())
        async with lock:
            wait = self._host_next.get(host, 0.0) - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            now = time.monotonic()
            self._host_next[host] = now + self.cfg.min_interval_s
            self.navigations.append((now, host))

    # -- the one verb -------------------------------------------------------------------------------
    async def visit(
        self,
        url: str,
        *,
        purpose: str,
        extract_js: str | None = None,
        screenshot: Path | None = None,
        screenshot_rel: str = "",
        timeout_s: float | None = None,
    ) -> tuple[PageEvidence, Any]:
        """Load ``url``, run ``extract_js`` (a JS function expression) in it, screenshot it.

        ``screenshot`` is where the PNG goes (when screenshots are on); ``screenshot_rel`` is the path
        recorded in the evidence (relative to the retrieval directory). See the module docstring.
        """
        ev = PageEvidence(url=url, purpose=purpose, status="error")
        if not self.is_allowed(url):
            ev.status, ev.reason = "blocked", f"host {host_of(url)!r} is not an allowed host"
            self.failures += 1
            return ev, None
        await self._ensure_browser()
        budget = float(timeout_s or self.cfg.page_timeout_s)
        assert self._contexts is not None
        ctx = await self._contexts.get()
        queue = self._contexts
        t0 = time.monotonic()
        data: Any = None
        page: Any = None
        try:
            page = await ctx.new_page()
            # Paced right before the navigation, so the spacing is what the site sees.
            await self._pace(host_of(url))
            t0 = time.monotonic()
            # The hard cap covers navigation, extraction and the screenshot together.
            shot = self.cfg.screenshot_timeout_s if self.cfg.screenshots and screenshot is not None else 0.0
            data = await asyncio.wait_for(
                self._load(page, url, ev, extract_js, screenshot, screenshot_rel, budget), budget + shot + 5.0
            )
        except TimeoutError:
            ev.status, ev.reason = "timeout", f"page did not finish within {budget:g}s (hard cap)"
        except Exception as exc:  # a page (or a dead browser) must never take the retriever down
            ev.status, ev.reason = "error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
        finally:
            ev.elapsed_s = round(time.monotonic() - t0, 3)
            if page is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(page.close(), 5)
            if queue is self._contexts:  # not rebuilt meanwhile by a relaunch
                queue.put_nowait(ctx)
        self.visits += 1
        if ev.status != "ok":
            self.failures += 1
        return ev, data if ev.status == "ok" else None

    async def _load(
        self,
        page: Any,
        url: str,
        ev: PageEvidence,
        extract_js: str | None,
        screenshot: Path | None,
        screenshot_rel: str,
        budget: float,
    ) -> Any:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        ms = budget * 1000.0
        page.set_default_timeout(ms)
        try:
            resp = await page.goto(url, wait_until="domcontentloaded", timeout=ms)
        except PlaywrightTimeout:
            ev.status, ev.reason = "timeout", f"page did not finish loading within {budget:g}s"
            await self._shoot(page, ev, screenshot, screenshot_rel)
            return None
        except PlaywrightError as exc:
            ev.status, ev.reason = "error", str(exc).splitlines()[0][:300]
            return None
        ev.final_url = page.url
        ev.http_status = resp.status if resp is not None else None
        with contextlib.suppress(Exception):
            ev.title = (await page.title())[:200]
        if resp is not None and resp.status >= 400:
            ev.status, ev.reason = "http_error", f"HTTP {resp.status}"
            await self._shoot(page, ev, screenshot, screenshot_rel)
            return None
        data = None
        if extract_js:
            try:
                data = await page.evaluate(extract_js)
            except PlaywrightError as exc:
                ev.status, ev.reason = "error", f"extraction failed: {str(exc).splitlines()[0][:300]}"
                return None
        ev.status = "ok"
        await self._shoot(page, ev, screenshot, screenshot_rel)
        return data

    async def _shoot(self, page: Any, ev: PageEvidence, path: Path | None, rel: str) -> None:
        """The page's screenshot within its own budget (``screenshot_timeout_s``); a failure is recorded."""
        if path is None or not self.cfg.screenshots:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(
                path=str(path), timeout=self.cfg.screenshot_timeout_s * 1000.0, animations="disabled"
            )
            ev.screenshot = rel or str(path)
        except Exception as exc:  # evidence is best-effort; the visit's status stands
            ev.screenshot_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            log.warning("screenshot of %s failed: %s", ev.url, ev.screenshot_error)
