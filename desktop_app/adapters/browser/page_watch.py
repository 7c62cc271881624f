"""What replay watches inside every page of a run, to wait for the app the way a person does.

An init script (:data:`WATCH_JS`, in every document of the run from its first element on)
notes when the document last changed (Procedura's own marks left out) and counts the changes,
the timers the page set to do something soon (a debounced save, handlers attached a moment
after ``load``; not the ones a timer set, which are a poll or a ticking clock) and the
IndexedDB writes still open. The other scripts read that state: whether the page is at rest,
whether it reacted to an action, whether it kept anything in the browser's storage.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "BUSY_JS",
    "KEPT_JS",
    "MARK_JS",
    "SETTLED_JS",
    "TIMER_HORIZON_MS",
    "WATCH_JS",
]

#: The longest timer that counts as "the page is about to do something": a save debounced by
#: up to this, handlers attached up to this after ``load``. Longer ones are reminders, polls.
TIMER_HORIZON_MS: Final = 2500

WATCH_JS: Final = (
    """(() => {
  if (window.__proceduraChanges) return;
  const state = {
    last: performance.now(), count: 0, timers: new Map(), idbOpen: 0, idbWrites: 0,
    id: Math.random().toString(36).slice(2), stored: null, storedAtStart: null,
  };
  Object.defineProperty(window, "__proceduraChanges", { value: state, enumerable: false });
  const changed = () => { state.last = performance.now(); state.count += 1; };
  state.changed = changed;
  const own = (m) => m.type === "attributes"
    && (m.attributeName || "").startsWith("data-procedura-");
  const watch = new MutationObserver((records) => {
    if (records.some((m) => !own(m))) changed();
  });
  const start = () => {
    state.last = performance.now();
    watch.observe(document, {
      subtree: true, childList: true, attributes: true, characterData: true,
    });
  };
  if (document.documentElement) start();
  else document.addEventListener("readystatechange", start, { once: true });

  // The browser's storage of this origin, as one string (to tell that it changed, whatever
  // wrote it: setItem or a property).
  let store = null;
  try { store = window.localStorage; } catch (e) { store = null; }
  state.snapshot = () => {
    if (!store) return "";
    try {
      let text = "";
      for (let i = 0; i < store.length; i++) {
        const key = store.key(i);
        text += key + "\\u0000" + store.getItem(key) + "\\u0001";
      }
      return text;
    } catch (e) { return ""; }
  };
  state.storedAtStart = state.snapshot();
  state.stored = state.storedAtStart;

  // Timers set to do something soon. One a timer's own callback sets is a poll or a clock:
  // never waited for.
  const HORIZON = """
    + str(TIMER_HORIZON_MS)
    + """;
  const setTimer = window.setTimeout, clearTimer = window.clearTimeout;
  let inTimer = 0;
  window.setTimeout = function (callback, delay, ...args) {
    const ms = Number(delay) || 0;
    if (typeof callback !== "function" || inTimer || ms > HORIZON)
      return setTimer.call(window, callback, delay, ...args);
    let id = null;
    const run = function () {
      state.timers.delete(id);
      inTimer += 1;
      try { return callback.apply(this, args); } finally { inTimer -= 1; }
    };
    id = setTimer.call(window, run, delay);
    state.timers.set(id, performance.now() + ms);
    return id;
  };
  window.clearTimeout = function (id) {
    state.timers.delete(id);
    return clearTimer.call(window, id);
  };

  // IndexedDB writes: open until their transaction ends.
  if (window.IDBDatabase) {
    const transaction = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (stores, mode, ...rest) {
      const tx = transaction.call(this, stores, mode, ...rest);
      if (mode === "readwrite") {
        state.idbWrites += 1;
        state.idbOpen += 1;
        changed();
        let open = true;
        const done = () => { if (open) { open = false; state.idbOpen -= 1; changed(); } };
        for (const name of ["complete", "abort", "error"]) tx.addEventListener(name, done);
      }
      return tx;
    };
  }
})()"""
)

BUSY_JS: Final = """() => {
  if (document.readyState === "loading") return true;
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  };
  for (const el of document.querySelectorAll('[aria-busy="true"], [role="progressbar"]')) {
    if (visible(el)) return true;
  }
  for (const el of document.querySelectorAll('[role="status"], .spinner, .loading')) {
    if (visible(el) && /loading|please wait|…$|\\.\\.\\.$/i.test((el.textContent || "").trim()))
      return true;
  }
  return false;
}"""

# Whether the document has come to rest: loaded, no change for quietMs, nothing showing it is
# loading (a spinner saying "Loading…" is not rest) and, when asked (*pending*), no timer set to
# do something soon, no IndexedDB write open and no change to the storage since the last look.
# Null when its changes are not watched.
SETTLED_JS: Final = f"""([quietMs, pending]) => {{
  if (document.readyState !== "complete") return false;
  const state = window.__proceduraChanges;
  if (!state) return null;  // not watched yet: nobody knows when it last changed
  if (pending) {{
    const stored = state.snapshot();
    if (stored !== state.stored) {{ state.stored = stored; state.changed(); }}
    if (state.timers.size || state.idbOpen) return false;
  }}
  if (performance.now() - state.last < quietMs) return false;
  return !({BUSY_JS})();
}}"""

# Which document this is and how many times it has changed: the page reacted to an action
# when either differs afterwards. Null when its changes are not watched.
MARK_JS: Final = """() => {
  const state = window.__proceduraChanges;
  return state ? [state.id, state.count] : null;
}"""

# Whether this document wrote to the browser's storage (localStorage, IndexedDB): an app that
# keeps its data in the browser, whose effect a reload must still show.
KEPT_JS: Final = """() => {
  const state = window.__proceduraChanges;
  if (!state) return false;
  return state.idbWrites > 0 || state.snapshot() !== state.storedAtStart;
}"""
