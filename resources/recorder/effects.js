/*
 * Procedura effects script — resources/recorder/effects.js
 *
 * Injected by the recorder before `capture.js` (both with `context.add_init_script`) into every
 * page and frame. Where `capture.js` reports what the person did, this script observes what the
 * page did in response, from the page's own side, and attributes each change to the action that
 * caused it: by time (what happened after an action began and before the next one) and by cause
 * (what a request, a timer or a socket message started by an earlier action led to, even when
 * the person has already moved on). Nothing is held for later: `capture.js` sends every report
 * as soon as it is made, and reports about one action are cumulative, so the newest replaces
 * the ones before.
 *
 * It never changes what the page does. To follow causes it wraps, before any page script runs,
 * `fetch` (and the body readers of its responses), `XMLHttpRequest.prototype.open/send`, the
 * `WebSocket` constructor and `send`, `setTimeout` and `requestAnimationFrame`, and `alert`,
 * `confirm` and `prompt` (to note the person's answer): each wrapper
 * calls the page's function unchanged and only notes which action is behind it. Page scripts
 * that run their work through other queues (a MessageChannel scheduler, for one) are attributed
 * by time.
 *
 * API: `window.__proceduraEffects` (non-enumerable, frozen), used by `capture.js`:
 *
 *   attach({emit, isSensitive, fieldLabel})
 *        emit(type, fields) sends a report; isSensitive(element) and fieldLabel(element) say
 *        whether a field's value is secret and what it is called. Until attached, nothing is
 *        reported (changes are still observed and attributed).
 *   begin(id, element) -> {ready, ready_drawing, ready_drawn, shown, address_drawn}
 *        an action (payload id `id`, on `element` or null) begins now, before the page sees the
 *        event. The previous action's window closes (its report follows). `ready`: when
 *        `element` was last changed (inserted, or its class, style or visibility changed; the
 *        document first painted; the URL last changed; the page scrolled), ms since the epoch.
 *        `ready_drawing`, `ready_drawn`: when the page began, and was done, drawing the frame
 *        that first shows it so (null: none has yet): a picture from the screen before it
 *        began does not show it as it was acted on (one from before it was done may not).
 *        `shown`: when the document was first painted (null if not yet): a picture from
 *        before is of the page it replaced. `address_drawn`: when the page was done drawing
 *        itself at its current address (null if it never changed).
 *   masks() -> [{x, y, width, height}]
 *        the boxes (viewport pixels) of this document's visible sensitive fields.
 *   flush()  report every action whose report is pending, now (the recording ends).
 *   count()  how many actions began in this document (to tell whether one began meanwhile).
 *
 * REPORT `effects` (cumulative for one action):
 *   ref             the action's payload id (as given to `begin`)
 *   settled         true once the page was quiet (no attributed change, no pending request,
 *                   no short timer it set still to fire) for SETTLE_MS after it; false while
 *                   it may still change
 *   dom_changed     anything in the DOM changed (attributes included)
 *   texts_known     false when this page's text could not be read cheaply (then the two lists
 *                   below are empty because nothing is known, not because nothing changed)
 *   texts_added     [{text, role, gone}] lines of visible text that appeared (role: "status",
 *                   "alert", "dialog", "heading", "item" or null, from the element showing
 *                   it; "status" also for the usual containers of flash messages without a
 *                   role; gone: it disappeared again before the report). Icon glyphs and
 *                   content hidden from assistive technology are no text.
 *   texts_removed   [{text, role: null}] lines that were visible when the action began and
 *                   are not any more
 *   items_added / items_removed   change in the number of list items and table rows
 *   dialogs_opened / dialogs_closed   change in the number of open dialogs
 *   browser_dialogs [{kind, message, accepted}] the browser's own dialogs (alert, confirm,
 *                   prompt) the action led to and how the person answered (OK: accepted);
 *                   never what was typed into a prompt
 *   values_changed  [{field, value}] fields whose value the page changed (never the field
 *                   acted on, never a sensitive one)
 *   requests        [{method, path, status}] requests the action caused (fetch, XHR, form
 *                   submissions; path without the query)
 *   url, title      where the document is at the report
 *   left_page       the document began to unload while this was the current action
 *   first_change    when the DOM first changed after it began, or the page began to unload
 *                   (ms since the epoch), or null
 *   first_change_frame   when the page began the frame that first shows that change (a
 *                   picture from the screen before it cannot show it), or null
 *   url_after, title_after   where the page was when the action's window closed (the next
 *                   action began) or, while it is the newest action, where it is now
 *
 * `loaded` (one per document, once the load event fired and the page was first painted, or
 *   a second after it): {ref, title, masks, shown}
 *   ref: the id of the document's load, reported like an action: its `effects` (sent right
 *   after, and as they change until the page settles) are what the page showed as it loaded,
 *   measured from an empty page (so every line shown is "added").
 *   shown: when the document first painted (ms since the epoch), or null.
 *
 * Texts reported are the first MAX_REPORTED_TEXTS by role: messages first (status, alert),
 * then headings, dialogs, items of a list or table, the rest, each in page order.
 */
(() => {
  "use strict";

  if (Object.prototype.hasOwnProperty.call(window, "__proceduraEffects")) return;
  if (window.__proceduraDescribeOnly === true) return; // replay's describe mode: nothing here

  // ── settings ─────────────────────────────────────────────────────────────────────────────

  /** Quiet this long after its last change (and no pending request): an action has settled. */
  const SETTLE_MS = 300;
  /** An action still waiting on requests this long after it began is reported unsettled. */
  const MAX_WAIT_MS = 10000;
  /** Work started this long after an action began is no longer counted as its doing. */
  const CAUSE_HORIZON_MS = 10000;
  /** A socket message this soon after an action sent on the socket answers it. */
  const SOCKET_ANSWER_MS = 3000;
  /** A timer an action sets this short is work it still has to do (its page is not settled). */
  const AWAITED_TIMER_MS = 1500;
  /** A timer this short only yields to the event loop (browsers clamp nested ones to 4 ms). */
  const YIELD_MS = 4;
  const MAX_AWAITED_TIMERS = 20;
  /** Reports about one action are sent at most this often (the last one always). */
  const REPORT_COALESCE_MS = 40;
  /** Reading the page's text took this long three times: this page's texts are not read. */
  const SLOW_SNAPSHOT_MS = 60;
  const MAX_LINE = 200;
  const MAX_LINES = 3000;
  const MAX_REPORTED_TEXTS = 30;
  /** How many lines that appeared get their role looked up (to report messages first). */
  const MAX_ROLES = 300;
  const MAX_REPORTED_REQUESTS = 20;
  const MAX_REPORTED_VALUES = 8;
  const MAX_BROWSER_DIALOGS = 5;
  const MAX_CONTEXTS = 50;
  /** How long the frame clock keeps time after the page last changed. */
  const CLOCK_MS = 1000;
  /** How long `loaded` waits for the first paint to be recorded. */
  const PAINT_WAIT_MS = 1000;

  const ROW_SELECTOR = "li, tr, [role='row'], [role='listitem'], [role='option']";
  const DIALOG_SELECTOR = "dialog[open], [role='dialog'], [role='alertdialog'], [aria-modal='true']";
  const FIELD_SELECTOR = "input:not([type='hidden' i]):not([type='password' i]), textarea, select";
  const STATUS_SELECTOR = "[role~='status' i], output, [aria-live]:not([aria-live='off' i])";
  /**
   * Where pages without ARIA roles show their messages ("Record was successfully deleted.",
   * "The contact “Jane” was added successfully."): the usual containers of flash messages
   * (Bootstrap's alerts, Django's message list, Rails' and Flask's flashes, toasts).
   */
  const MESSAGE_SELECTOR = ".alert, .messagelist, .messages, .flash, .flashes, .flash-message, " +
    ".notice, .notification, .notifications, .toast, .toasts, .callout";
  const ALERT_SELECTOR = "[role~='alert' i]";
  const HEADING_SELECTOR = "h1, h2, h3, h4, h5, h6, [role~='heading' i]";
  const ITEM_SELECTOR = "li, tr, [role~='row' i], [role~='listitem' i], [role~='option' i]";
  const VISIBILITY_ATTRIBUTES = new Set([
    "class", "style", "hidden", "open", "aria-hidden", "aria-expanded", "disabled", "inert",
  ]);
  const OWN_ATTR_PREFIX = "data-procedura-";

  // Builtins taken before page scripts run, so a page that replaces them cannot break us.
  const now = Date.now;
  const nativeSetTimeout = window.setTimeout;
  const nativeRaf = window.requestAnimationFrame;
  const setTimer = nativeSetTimeout.bind(window);
  const clearTimer = window.clearTimeout.bind(window);
  const NativeMutationObserver = window.MutationObserver;
  const NativeMessageChannel = window.MessageChannel;
  const defineProperty = Object.defineProperty;

  const errors = [];
  function noteError(error) {
    if (errors.length < 20) errors.push(String((error && (error.stack || error.message)) || error));
  }
  function guarded(fn) {
    return function guardedEffects(...args) {
      try {
        return fn.apply(this, args);
      } catch (error) {
        noteError(error);
        return undefined;
      }
    };
  }

  let sink = null;

  // ── what the page shows: the state an action's effects are measured against ─────────────

  let textsReadable = true;
  let slowSnapshots = 0;

  function normalizeLine(line) {
    const text = line.replace(/[\u200b\u00ad]/g, "").replace(/\s+/g, " ").trim();
    return text.length > MAX_LINE ? text.slice(0, MAX_LINE) : text;
  }

  /** Elements whose text is never page text (form controls show values, not text). */
  const TEXTLESS_TAGS = new Set([
    "script", "style", "noscript", "template", "textarea", "select", "input", "svg", "canvas",
  ]);

  /** Icon fonts draw their glyph from a word ("check_circle"): a person sees no word there. */
  const ICON_CLASS = /(?:^|\s)(?:material-icons\S*|material-symbols\S*|q-icon|glyphicon)(?:\s|$)/;

  /** Whether `element` only decorates (hidden from assistive technology, an icon's glyph). */
  function isDecoration(element) {
    if (element.getAttribute("aria-hidden") === "true") return true;
    const classes = element.getAttribute("class");
    return !!classes && ICON_CLASS.test(classes);
  }

  /** A clip that shows nothing: "rect(0px, 0px, 0px, 0px)" (also written without commas). */
  const EMPTY_CLIP = /^rect\(\s*0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?\s*\)$/;

  /**
   * Whether `element` is there for screen readers only (the "sr-only" idiom: an absolutely
   * placed box clipped to nothing or shrunk to a pixel, or pushed off the left of the page):
   * Select2's "3 results are available, use up and down arrow keys to navigate" live region,
   * a skip link. A person sees none of its text.
   */
  function isVisuallyHidden(element, computed) {
    const position = computed.position;
    if (position !== "absolute" && position !== "fixed") return false;
    if (EMPTY_CLIP.test(computed.clip)) return true;
    const clipPath = computed.clipPath;
    if (clipPath === "inset(50%)" || clipPath === "inset(100%)") return true;
    const rect = element.getBoundingClientRect();
    if (rect.right <= 0 && rect.width > 0) return true; // left of the page: never scrolled to
    const clipped = computed.overflow === "hidden" || computed.overflowX === "hidden";
    return clipped && rect.width <= 1 && rect.height <= 1;
  }

  /** Whether `element` is an editing region whose text is secret (never read as page text). */
  function holdsSecret(element) {
    if (element.getAttribute("data-procedura-sensitive") === "true") return true;
    if (!element.isContentEditable) return false;
    const parent = element.parentElement;
    if (parent && parent.isContentEditable) return false; // the editing host decided already
    return !sink || !sink.isSensitive || sink.isSensitive(element);
  }

  /**
   * The visible text of the document as a multiset of lines, or null when not readable. A
   * line is the text of one box: an element that is not inline (a paragraph, a button, a list
   * item, a cell) with the text of its inline content ("Contact <b>Jane</b> created" is one
   * line), so lines do not merge or split as blocks around them appear and disappear.
   * Returns {lines: Map text -> count, shownBy: Map text -> the first element showing it}.
   */
  function readLines() {
    if (!textsReadable) return null;
    const body = document.body;
    const lines = new Map();
    const shownBy = new Map();
    if (!body) return { lines, shownBy };
    const started = performance.now();
    const parts = new Map(); // box element -> its text so far
    let count = 0;
    const visit = (node, box) => {
      for (let child = node.firstChild; child && count < MAX_LINES; child = child.nextSibling) {
        if (child.nodeType === Node.TEXT_NODE) {
          if (box && child.nodeValue) parts.set(box, (parts.get(box) || "") + child.nodeValue);
          continue;
        }
        if (child.nodeType !== Node.ELEMENT_NODE) continue;
        const tag = child.localName;
        if (TEXTLESS_TAGS.has(tag) || holdsSecret(child) || isDecoration(child)) continue;
        if (tag === "br") {
          if (box) parts.set(box, (parts.get(box) || "") + " ");
          continue;
        }
        const computed = window.getComputedStyle(child);
        const display = computed.display;
        if (display === "none") continue;
        const contents = display === "contents";
        if (!contents && child.checkVisibility && !child.checkVisibility()) continue;
        if (computed.visibility !== "visible") continue;
        if (!contents && isVisuallyHidden(child, computed)) continue;
        const own = contents || display === "inline" ? box : child;
        if (own !== box) count += 1;
        visit(child, own);
        if (child.shadowRoot) visit(child.shadowRoot, own);
      }
    };
    visit(body, body);
    for (const [element, text] of parts) {
      const line = normalizeLine(text);
      if (!line) continue;
      lines.set(line, (lines.get(line) || 0) + 1);
      if (!shownBy.has(line)) shownBy.set(line, element);
    }
    if (performance.now() - started > SLOW_SNAPSHOT_MS) {
      slowSnapshots += 1;
      if (slowSnapshots >= 3) textsReadable = false;
    }
    return { lines, shownBy };
  }

  function isShown(element) {
    if (element.checkVisibility) return element.checkVisibility();
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0;
  }

  function openDialogs() {
    let count = 0;
    for (const dialog of document.querySelectorAll(DIALOG_SELECTOR)) {
      if (isShown(dialog)) count += 1;
    }
    return count;
  }

  function fieldValues() {
    const values = new Map();
    for (const field of document.querySelectorAll(FIELD_SELECTOR)) {
      const type = (field.type || "").toLowerCase();
      if (type === "checkbox" || type === "radio") values.set(field, field.checked ? "on" : "off");
      else if (type !== "file") values.set(field, field.value);
    }
    return values;
  }

  function snapshot() {
    const text = readLines();
    return {
      lines: text ? text.lines : null,
      shownBy: text ? text.shownBy : null,
      rows: document.querySelectorAll(ROW_SELECTOR).length,
      dialogs: openDialogs(),
      values: fieldValues(),
    };
  }

  // ── actions and what they did ────────────────────────────────────────────────────────────

  /** Every action begun in this document, oldest first (at most MAX_CONTEXTS kept). */
  const contexts = [];
  let current = null;
  let begun = 0;

  function newContext(id, element) {
    const context = {
      id, element, t: now(), url: location.href,
      appeared: new Map(), // line -> true while still shown
      roles: new Map(), // line -> the role of what shows it (looked up once)
      disappeared: new Set(),
      rows: 0, dialogsOpened: 0, dialogsClosed: 0, browserDialogs: [],
      values: new Map(), requests: [], pending: 0, timers: 0, timersAwaited: 0,
      domChanged: false, firstChange: 0, firstFrame: 0, textsKnown: true, leftPage: false,
      urlAfter: location.href, titleAfter: document.title,
      lastChange: now(), settled: false, settleTimer: null, reportTimer: null, reports: 0,
    };
    contexts.push(context);
    if (contexts.length > MAX_CONTEXTS) contexts.shift();
    return context;
  }

  /** Whether work started now may still be `context`'s doing. */
  function isRecent(context) {
    return !!context && now() - context.t <= CAUSE_HORIZON_MS;
  }

  /**
   * The document's own load is the first "action": what the page shows as it loads (and what
   * its first requests render) is what the navigation led to. Its base is an empty page.
   */
  const loading = newContext(`load-${Math.random().toString(16).slice(2, 14)}`, null);
  current = loading;
  let loadedSent = false;

  /** The attribution interval: the changes since `base` belong to `owner`. */
  let interval = {
    owner: loading,
    base: { lines: new Map(), shownBy: new Map(), rows: 0, dialogs: 0, values: new Map() },
    dirty: true,
  };

  /** `skip`: a field whose change is not `context`'s (the one the next action is about). */
  function applyDiff(context, before, after, skip) {
    if (before.lines && after.lines && context.textsKnown) {
      for (const [line, count] of after.lines) {
        if (count <= (before.lines.get(line) || 0)) continue;
        context.appeared.set(line, true);
        if (!context.roles.has(line) && context.roles.size < MAX_ROLES) {
          context.roles.set(line, roleOf(after.shownBy.get(line))); // now: it may go again
        }
      }
      for (const [line, count] of before.lines) {
        if (count > (after.lines.get(line) || 0)) {
          if (context.appeared.has(line)) context.appeared.set(line, false);
          else context.disappeared.add(line);
        }
      }
      for (const line of context.disappeared) {
        if (after.lines.has(line)) context.disappeared.delete(line); // back again
      }
      for (const [line, shown] of context.appeared) {
        if (!shown && after.lines.has(line)) context.appeared.set(line, true);
      }
    } else if (!after.lines || !before.lines) {
      context.textsKnown = false;
    }
    context.rows += after.rows - before.rows;
    const dialogs = after.dialogs - before.dialogs;
    if (dialogs > 0) context.dialogsOpened += dialogs;
    if (dialogs < 0) context.dialogsClosed -= dialogs;
    for (const [field, value] of after.values) {
      if (field === context.element || field === skip || !before.values.has(field)) continue;
      if (injectedInto.has(field)) continue;
      if (before.values.get(field) !== value) context.values.set(field, value);
    }
  }

  /**
   * Close the interval: what changed since its base goes to its owner; `owner` owns next. The
   * element `owner` acts on is left out of the old owner's changes: a select or a field whose
   * value changed as the next action began (its change or input event comes after) changed by
   * that action.
   */
  function closeInterval(owner) {
    const state = snapshot();
    if (interval && interval.owner) {
      // Values a script set leave no mutation behind: compared on every close, dirty or not.
      applyDiff(interval.owner, interval.base, state, owner && owner.element);
      if (interval.dirty || interval.owner.values.size > 0) scheduleReport(interval.owner);
    }
    interval = { owner, base: state, dirty: false };
    injectedInto = new WeakSet(); // the new base holds what Procedura typed
  }

  /** Hand the interval to `owner` (closing it first only if it holds changes of another). */
  function switchOwner(owner) {
    if (!interval) {
      interval = { owner, base: snapshot(), dirty: false };
      return;
    }
    if (interval.owner === owner) return;
    if (interval.dirty) closeInterval(owner);
    else interval.owner = owner;
  }

  // ── causes: which action the running task works for ──────────────────────────────────────

  let taskCause = null;
  let exitScheduled = false;
  const exitChannel = NativeMessageChannel ? new NativeMessageChannel() : null;

  function causeNow() {
    if (taskCause && isRecent(taskCause)) return taskCause;
    return current;
  }

  const exitTask = guarded(() => {
    exitScheduled = false;
    taskCause = null;
    if (interval && interval.owner !== current) switchOwner(current);
  });
  if (exitChannel) exitChannel.port1.onmessage = exitTask;

  /** The running task does `context`'s work (a response, a timer it set, a socket answer). */
  function enterTask(context) {
    if (!context || !isRecent(context)) return;
    if (context === current && !taskCause && interval && interval.owner === current) return;
    taskCause = context;
    switchOwner(context);
    if (!exitScheduled) {
      exitScheduled = true;
      if (exitChannel) exitChannel.port2.postMessage(null);
      else setTimer(exitTask, 0);
    }
  }

  // ── settling and reporting ───────────────────────────────────────────────────────────────

  function noteActivity(context) {
    context.lastChange = now();
    context.settled = false;
    scheduleSettle(context);
  }

  function scheduleSettle(context) {
    clearTimer(context.settleTimer);
    context.settleTimer = setTimer(guarded(() => settle(context)), SETTLE_MS);
  }

  /** Where the page is as `context`'s window closes: what it led to (a later action's doing
   * never moves it). */
  function noteWhereItLed(context) {
    context.urlAfter = location.href;
    context.titleAfter = document.title;
  }

  function settle(context) {
    context.settleTimer = null;
    const quiet = now() - context.lastChange >= SETTLE_MS - 5;
    if ((context.pending > 0 || context.timers > 0) && now() - context.t < MAX_WAIT_MS) {
      scheduleSettle(context); // still waiting for an answer or a timer
      return;
    }
    if (!quiet) {
      scheduleSettle(context);
      return;
    }
    // Closed even when nothing mutated: values a script set leave no mutation behind.
    if (interval && interval.owner === context) closeInterval(context);
    if (context === current) noteWhereItLed(context);
    context.settled = context.pending === 0 && context.timers === 0;
    report(context);
  }

  function scheduleReport(context) {
    if (context.reportTimer !== null) return;
    context.reportTimer = setTimer(guarded(() => {
      context.reportTimer = null;
      report(context);
    }), REPORT_COALESCE_MS);
  }

  /** The role of what shows a line: a status or alert message, a dialog, a heading, an item. */
  function roleOf(element) {
    if (!element || element.nodeType !== Node.ELEMENT_NODE) return null;
    if (element.closest(ALERT_SELECTOR)) return "alert";
    if (element.closest(STATUS_SELECTOR)) return "status";
    if (element.closest(MESSAGE_SELECTOR)) return "status"; // a message without a role
    if (element.closest(HEADING_SELECTOR)) return "heading";
    if (element.closest("dialog, [role~='dialog' i], [role~='alertdialog' i]")) return "dialog";
    if (element.closest(ITEM_SELECTOR)) return "item";
    return null;
  }

  /** Messages first, then headings, dialogs, items, the rest (each kept in page order). */
  const ROLE_RANK = { alert: 0, status: 0, heading: 1, dialog: 2, item: 3 };

  function report(context) {
    if (!sink || (context === loading && !loadedSent)) return; // the page's load: with `loaded`
    clearTimer(context.reportTimer);
    context.reportTimer = null;
    context.reports += 1;
    const rank = (text) => ROLE_RANK[context.roles.get(text)] ?? 4;
    const added = Array.from(context.appeared)
      .map(([text, shown], order) => ({ text, shown, order }))
      .sort((a, b) => rank(a.text) - rank(b.text) || a.order - b.order)
      .slice(0, MAX_REPORTED_TEXTS)
      .map(({ text, shown }) => ({ text, role: context.roles.get(text) || null, gone: !shown }));
    const removed = Array.from(context.disappeared).slice(0, MAX_REPORTED_TEXTS)
      .map((text) => ({ text, role: null }));
    const values = [];
    for (const [field, value] of context.values) {
      if (values.length >= MAX_REPORTED_VALUES) break;
      if (!field.isConnected || (sink.isSensitive && sink.isSensitive(field))) continue;
      values.push({ field: sink.fieldLabel ? sink.fieldLabel(field) : "", value });
    }
    sink.emit("effects", {
      ref: context.id,
      settled: context.settled,
      dom_changed: context.domChanged,
      texts_known: context.textsKnown,
      texts_added: added,
      texts_removed: removed,
      items_added: Math.max(0, context.rows),
      items_removed: Math.max(0, -context.rows),
      dialogs_opened: context.dialogsOpened,
      dialogs_closed: context.dialogsClosed,
      browser_dialogs: context.browserDialogs.slice(0, MAX_BROWSER_DIALOGS),
      values_changed: values,
      requests: context.requests.slice(0, MAX_REPORTED_REQUESTS),
      left_page: context.leftPage,
      first_change: context.firstChange || null,
      first_change_frame: context.firstFrame || null,
      url_after: context === current ? location.href : context.urlAfter,
      title_after: context === current ? document.title : context.titleAfter,
    });
  }

  // ── DOM changes ──────────────────────────────────────────────────────────────────────────

  /** When each element was last inserted or had its look changed (for `ready`). */
  const changedAt = new WeakMap();
  let urlChangedAt = 0;
  let scrolledAt = 0; // the window or any box in it scrolled (a picture before is elsewhere)

  function isOwnMutation(record) {
    return record.type === "attributes" &&
      (record.attributeName || "").startsWith(OWN_ATTR_PREFIX);
  }

  /** Fields Procedura itself typed into (its own input is never the page's doing). */
  let injectedInto = new WeakSet();

  function isInjecting() {
    return window.__proceduraInjecting === true;
  }

  const onMutations = guarded((records) => {
    if (isInjecting()) return; // Procedura's own input: not an effect of anything
    const t = now();
    let relevant = false;
    for (const record of records) {
      if (isOwnMutation(record)) continue;
      relevant = true;
      if (record.type === "childList") {
        for (const node of record.addedNodes) {
          if (node.nodeType === Node.ELEMENT_NODE) changedAt.set(node, t);
        }
      } else if (record.type === "attributes" && VISIBILITY_ATTRIBUTES.has(record.attributeName)) {
        changedAt.set(record.target, t);
      }
    }
    if (!relevant) return;
    armFrameClock();
    const cause = causeNow();
    if (!cause) return; // the page building itself before any action: the baseline moves
    if (!interval) interval = { owner: cause, base: snapshot(), dirty: false };
    if (interval.owner !== cause) switchOwner(cause);
    interval.dirty = true;
    cause.domChanged = true;
    noteFirstChange(cause, t);
    noteActivity(cause);
  });

  function readyOf(element) {
    let ready = Math.max(urlChangedAt, scrolledAt, shownAt());
    for (let node = element; node; node = node.parentElement || (node.getRootNode && node.getRootNode().host)) {
      const t = changedAt.get(node);
      if (t !== undefined && t > ready) ready = t;
      if (node === document.documentElement) break;
    }
    return ready;
  }

  /**
   * When the document's first frame was painted on the main thread (ms since the epoch), or 0:
   * frames Chromium swaps to the screen after that moment are of this document, those before
   * of the page it replaced. (`paintTime`; where the browser does not give it, the time the
   * paint was presented, which is a little later: safe, if stricter.)
   */
  function shownAt() {
    const paints = performance.getEntriesByType ? performance.getEntriesByType("paint") : [];
    const first = paints.find((p) => p.name === "first-paint") || paints[0];
    if (!first) return 0;
    const painted = typeof first.paintTime === "number" ? first.paintTime : first.startTime;
    return Math.round(performance.timeOrigin + painted);
  }

  function masks() {
    const boxes = [];
    if (!sink || !sink.isSensitive) return boxes;
    for (const field of document.querySelectorAll("input, textarea, select, [contenteditable]")) {
      if (!sink.isSensitive(field)) continue;
      const rect = field.getBoundingClientRect();
      if (rect.width <= 0 || rect.height <= 0) continue;
      if (rect.bottom < 0 || rect.right < 0 || rect.top > innerHeight || rect.left > innerWidth) {
        continue;
      }
      boxes.push({
        x: Math.floor(rect.x), y: Math.floor(rect.y),
        width: Math.ceil(rect.width), height: Math.ceil(rect.height),
      });
    }
    return boxes;
  }

  // ── requests, timers and sockets: following causes ───────────────────────────────────────

  function pathOf(url) {
    try {
      const parsed = new URL(String(url), location.href);
      return parsed.origin === location.origin ? parsed.pathname : parsed.origin + parsed.pathname;
    } catch (error) {
      return "";
    }
  }

  /** A request `context` caused: noted, counted as pending until `done` is called. */
  function noteRequest(context, method, url) {
    if (!context) return () => {};
    const request = { method: String(method || "GET").toUpperCase(), path: pathOf(url), status: null };
    context.requests.push(request);
    context.pending += 1;
    noteActivity(context);
    let finished = false;
    return (status) => {
      if (finished) return;
      finished = true;
      if (typeof status === "number" && status > 0) request.status = status;
      context.pending = Math.max(0, context.pending - 1);
      noteActivity(context);
      scheduleReport(context);
    };
  }

  /** Each response's action, for its body readers. */
  const responseCause = new WeakMap();

  function wrapFetch() {
    const nativeFetch = window.fetch;
    if (typeof nativeFetch !== "function") return;
    const wrapped = function fetch(input, init) {
      const cause = causeNow();
      const context = isRecent(cause) ? cause : null;
      let done = () => {};
      if (context) {
        const method = (init && init.method) || (input && input.method) || "GET";
        const url = typeof input === "string" || input instanceof URL ? input : input && input.url;
        done = attemptOr(() => noteRequest(context, method, url), done);
      }
      const promise = nativeFetch.apply(this, arguments);
      if (!context) return promise;
      return promise.then((response) => {
        attemptOr(() => {
          responseCause.set(response, context);
          done(response.status);
          enterTask(context);
        });
        return response;
      }, (error) => {
        attemptOr(() => {
          done(0);
          enterTask(context);
        });
        throw error;
      });
    };
    copyIdentity(wrapped, nativeFetch);
    window.fetch = wrapped;
    if (window.Response) {
      for (const name of ["json", "text", "blob", "arrayBuffer", "formData"]) {
        const reader = window.Response.prototype[name];
        if (typeof reader !== "function") continue;
        const wrappedReader = function () {
          const promise = reader.apply(this, arguments);
          const context = responseCause.get(this);
          if (!context) return promise;
          return promise.then((value) => {
            attemptOr(() => enterTask(context));
            return value;
          });
        };
        copyIdentity(wrappedReader, reader);
        defineProperty(window.Response.prototype, name, {
          value: wrappedReader, writable: true, configurable: true, enumerable: false,
        });
      }
    }
  }

  function wrapXhr() {
    const Xhr = window.XMLHttpRequest;
    if (!Xhr) return;
    const proto = Xhr.prototype;
    const nativeOpen = proto.open;
    const nativeSend = proto.send;
    const opened = new WeakMap();
    const open = function open(method, url) {
      attemptOr(() => {
        const state = { method, url, done: null, context: null };
        opened.set(this, state);
        // Registered at open, before the page's own handlers in the usual order of calls.
        this.addEventListener("readystatechange", guarded(() => {
          if (this.readyState !== 4 || !state.context) return;
          if (state.done) state.done(this.status);
          enterTask(state.context);
        }));
      });
      return nativeOpen.apply(this, arguments);
    };
    const send = function send() {
      attemptOr(() => {
        const state = opened.get(this);
        const cause = causeNow();
        if (state && isRecent(cause)) {
          state.context = cause;
          state.done = noteRequest(cause, state.method, state.url);
        }
      });
      return nativeSend.apply(this, arguments);
    };
    copyIdentity(open, nativeOpen);
    copyIdentity(send, nativeSend);
    defineProperty(proto, "open", { value: open, writable: true, configurable: true });
    defineProperty(proto, "send", { value: send, writable: true, configurable: true });
  }

  function wrapWebSocket() {
    const Native = window.WebSocket;
    if (!Native || typeof Proxy !== "function") return;
    const lastSend = new WeakMap();
    const nativeSend = Native.prototype.send;
    const send = function send() {
      attemptOr(() => {
        const cause = causeNow();
        if (isRecent(cause)) {
          const previous = lastSend.get(this);
          if (previous && previous.done) previous.done(0);
          lastSend.set(this, { context: cause, t: now(), done: noteRequest(cause, "WS", this.url) });
        }
      });
      return nativeSend.apply(this, arguments);
    };
    copyIdentity(send, nativeSend);
    defineProperty(Native.prototype, "send", { value: send, writable: true, configurable: true });
    window.WebSocket = new Proxy(Native, {
      construct(target, args, newTarget) {
        const socket = Reflect.construct(target, args, newTarget);
        attemptOr(() => socket.addEventListener("message", guarded(() => {
          const sent = lastSend.get(socket);
          if (!sent || now() - sent.t > SOCKET_ANSWER_MS) return;
          if (sent.done) {
            sent.done(0);
            sent.done = null;
          }
          enterTask(sent.context);
        })));
        return socket;
      },
    });
  }

  /**
   * Timers carry the action that set them (a debounced search still answers the typing, even
   * after the next action began), except a zero-delay one that runs after a newer action
   * began (see below). Animation frames carry only a cause a task took over (the
   * rendering of a response): an animation loop is not kept an action's doing.
   */
  /** Short timers still to fire, by id: what to call once each fires or is cleared. */
  const timerCause = new Map();

  function wrapTimers() {
    const timeout = function setTimeout(handler, delay, ...rest) {
      const cause = causeNow();
      if (typeof handler !== "function" || !isRecent(cause)) {
        return nativeSetTimeout.call(window, handler, delay, ...rest);
      }
      // A short timer is work the action still has pending (a debounce): it settles after.
      const waited = Number(delay) <= AWAITED_TIMER_MS && cause.timersAwaited < MAX_AWAITED_TIMERS;
      let id = null;
      if (waited) {
        cause.timers += 1;
        cause.timersAwaited += 1;
      }
      const done = () => {
        if (id !== null && timerCause.delete(id)) cause.timers = Math.max(0, cause.timers - 1);
      };
      // A zero-delay timer only yields to the event loop (a framework drawing a batch of
      // changes). If it runs after a newer action's events did (a busy page handles input
      // first), the batch may hold that action's changes too: attributed by time then, as
      // work run through a MessageChannel is. A timer with a delay (a debounce) keeps its
      // setter.
      const yields = !(Number(delay) > YIELD_MS);
      const newest = current;
      id = nativeSetTimeout.call(window, function () {
        attemptOr(() => {
          done();
          if (yields && current !== newest) return;
          enterTask(cause);
          noteActivity(cause);
        });
        return handler.apply(this, arguments);
      }, delay, ...rest);
      if (waited) timerCause.set(id, done);
      return id;
    };
    copyIdentity(timeout, nativeSetTimeout);
    window.setTimeout = timeout;
    const nativeClearTimeout = window.clearTimeout;
    const clear = function clearTimeout(id) {
      const done = timerCause.get(id);
      if (done) attemptOr(done);
      return nativeClearTimeout.call(window, id);
    };
    copyIdentity(clear, nativeClearTimeout);
    window.clearTimeout = clear;
    if (typeof nativeRaf === "function") {
      const raf = function requestAnimationFrame(callback) {
        const cause = taskCause;
        if (typeof callback !== "function" || !isRecent(cause)) {
          return nativeRaf.call(window, callback);
        }
        return nativeRaf.call(window, function () {
          attemptOr(() => enterTask(cause));
          return callback.apply(this, arguments);
        });
      };
      copyIdentity(raf, nativeRaf);
      window.requestAnimationFrame = raf;
    }
  }

  function attemptOr(fn, fallback) {
    try {
      return fn();
    } catch (error) {
      noteError(error);
      return fallback;
    }
  }

  /** A wrapper that reads like the function it wraps (name, length, toString). */
  function copyIdentity(wrapper, original) {
    attemptOr(() => {
      defineProperty(wrapper, "name", { value: original.name, configurable: true });
      defineProperty(wrapper, "length", { value: original.length, configurable: true });
      const text = Function.prototype.toString.call(original);
      defineProperty(wrapper, "toString", {
        value: function toString() { return text; }, configurable: true, writable: true,
      });
    });
  }

  // ── the frame clock: when the page drew what ─────────────────────────────────────────────

  /**
   * The page's main thread draws in frames: a frame begins (its animation-frame callbacks
   * run), the page is laid out and painted, and the result goes to the compositor, which puts
   * it on screen a little later. A change made before a frame began is in that frame; a frame
   * on screen before another began cannot show anything that one drew. The clock notes, for
   * each frame of the last seconds, when it began (`run`, its first animation-frame callback)
   * and when its drawing was done (`done`, the first task after it: a message posted from the
   * callback). It only runs for CLOCK_MS after a change (a node, a scroll, the address), so an
   * idle page costs nothing; a change the clock did not see is taken as drawn when it happened.
   */
  const FRAMES_KEPT_MS = 10000;
  const frames = []; // {run, done} oldest first; done is 0 until the frame's drawing is over
  const awaitingFrame = new Set(); // contexts whose first change no frame has begun to draw
  let clockArmed = false;
  let clockUntil = 0;
  let framePort = null;

  function armFrameClock() {
    if (!sink || typeof nativeRaf !== "function") return;
    clockUntil = now() + CLOCK_MS;
    if (clockArmed) return;
    clockArmed = true;
    nativeRaf.call(window, frameTick);
  }

  const frameDone = guarded(() => {
    const t = now();
    for (const frame of frames) if (!frame.done) frame.done = t;
  });

  const frameTick = guarded(() => {
    const t = now();
    frames.push({ run: t, done: 0 });
    while (frames.length > 1 && t - frames[0].run > FRAMES_KEPT_MS) frames.shift();
    for (const context of awaitingFrame) context.firstFrame = t;
    awaitingFrame.clear();
    if (!framePort && typeof NativeMessageChannel === "function") {
      const channel = new NativeMessageChannel();
      channel.port1.onmessage = frameDone;
      framePort = channel.port2;
    }
    if (framePort) framePort.postMessage(0);
    if (now() < clockUntil) {
      nativeRaf.call(window, frameTick);
    } else {
      clockArmed = false;
    }
  });

  /** The frame that first shows the page as it was at `t` (ms since the epoch): the first
   * that began after `t`, as {run, done}, done 0 while it is drawn; null when none has begun
   * yet. A change older than the clock remembers, or one it missed, is taken as drawn then. */
  function frameAfter(t) {
    if (!t) return { run: 0, done: 0 };
    if (!frames.length || t < frames[0].run) return { run: t, done: t };
    const frame = frames.find((f) => f.run > t);
    if (!frame) return clockArmed ? null : { run: t, done: t };
    return frame;
  }

  /** `context` first changed the page at `t`: the frame to show it begins after (or, if `t`
   * falls in a frame still being drawn, maybe in that very frame: `t` is the bound then). */
  function noteFirstChange(context, t) {
    if (context.firstChange) return;
    context.firstChange = t;
    const last = frames[frames.length - 1];
    if (last && !last.done && last.run <= t) {
      context.firstFrame = t;
    } else {
      awaitingFrame.add(context);
    }
  }

  // ── the api capture.js uses ──────────────────────────────────────────────────────────────

  const api = Object.freeze({
    attach: guarded((hooks) => {
      sink = hooks;
      armFrameClock();
    }),
    begin: guarded((id, element) => {
      frameDone(); // a frame still drawing when this event came is drawn: events wait for it
      const shown = shownAt();
      const ready = element ? readyOf(element) : Math.max(urlChangedAt, shown);
      const drawing = frameAfter(ready);
      const address = frameAfter(urlChangedAt);
      const previous = current;
      if (previous) noteWhereItLed(previous);
      current = newContext(id, element || null);
      begun += 1;
      closeInterval(current);
      if (previous && !previous.settled) report(previous);
      noteActivity(current);
      return {
        ready,
        ready_drawing: drawing ? drawing.run : null,
        ready_drawn: drawing ? drawing.done || null : null,
        shown: shown || null,
        address_drawn: address ? address.done || null : null,
      };
    }),
    masks: guarded(() => masks()),
    count: () => begun,
    errors: () => errors.slice(),
    flush: guarded(() => {
      sendLoaded(); // the recording ends before the page said it loaded: it is here now
      if (interval && interval.owner && interval.dirty) closeInterval(interval.owner);
      for (const context of contexts) {
        if (!context.settled || context.reportTimer !== null) report(context);
      }
    }),
  });
  defineProperty(window, "__proceduraEffects", {
    value: api, enumerable: false, configurable: false, writable: false,
  });

  // ── the browser's own dialogs ────────────────────────────────────────────────────────────

  /**
   * `alert`, `confirm` and `prompt`, each called unchanged: what the person answered is noted
   * on the action that asked (kind, message, accepted), never what they typed into a prompt.
   */
  function wrapBrowserDialogs() {
    for (const kind of ["alert", "confirm", "prompt"]) {
      const native = window[kind];
      if (typeof native !== "function") continue;
      const wrapped = {
        [kind](...args) {
          const answer = native.apply(this, args);
          attemptOr(() => {
            const context = causeNow();
            if (!context) return;
            const accepted = kind === "alert" || (kind === "confirm" ? answer === true
              : answer !== null);
            const message = normalizeLine(String(args.length ? args[0] : ""));
            context.browserDialogs.push({ kind, message, accepted });
            noteActivity(context);
          });
          return answer;
        },
      }[kind];
      copyIdentity(wrapped, native);
      window[kind] = wrapped;
    }
  }

  // ── installation ─────────────────────────────────────────────────────────────────────────

  attemptOr(wrapFetch);
  attemptOr(wrapXhr);
  attemptOr(wrapWebSocket);
  attemptOr(wrapTimers);
  attemptOr(wrapBrowserDialogs);

  const noteUrlChange = guarded(() => {
    urlChangedAt = now();
    armFrameClock();
  });
  for (const name of ["pushState", "replaceState"]) {
    const native = history[name];
    if (typeof native !== "function") continue;
    const wrapped = function () {
      const result = native.apply(this, arguments);
      noteUrlChange();
      return result;
    };
    copyIdentity(wrapped, native);
    attemptOr(() => defineProperty(History.prototype, name, {
      value: wrapped, writable: true, configurable: true,
    }));
  }
  for (const type of ["input", "change"]) {
    window.addEventListener(type, (event) => {
      if (isInjecting() && event.target && event.target.nodeType === Node.ELEMENT_NODE) {
        injectedInto.add(event.target);
      }
    }, { capture: true, passive: true });
  }
  window.addEventListener("scroll", () => {
    scrolledAt = now();
    armFrameClock();
  }, { capture: true, passive: true });
  window.addEventListener("hashchange", noteUrlChange, true);
  window.addEventListener("popstate", noteUrlChange, true);

  function formProperty(form, name) {
    const descriptor = window.HTMLFormElement &&
      Object.getOwnPropertyDescriptor(window.HTMLFormElement.prototype, name);
    const value = descriptor && descriptor.get ? descriptor.get.call(form) : form.getAttribute(name);
    return typeof value === "string" ? value : "";
  }

  /** Form submissions as requests of the action that sent them (unless a script stops one
   * to send it itself: its fetch is the request then). */
  const submitted = new WeakMap();
  window.addEventListener("submit", guarded((event) => {
    const form = event.target;
    const context = causeNow();
    if (!context || !form || form.nodeType !== Node.ELEMENT_NODE) return;
    const submitter = event.submitter;
    // The form's own getters: `form.action` is its field named "action", when it has one.
    const method = (submitter && submitter.getAttribute("formmethod")) ||
      formProperty(form, "method") || "GET";
    const action = (submitter && submitter.getAttribute("formaction")) ||
      formProperty(form, "action") || location.href;
    const request = { method: String(method).toUpperCase(), path: pathOf(action), status: null };
    context.requests.push(request);
    submitted.set(event, { context, request });
    scheduleReport(context);
    setTimer(() => withdrawIfPrevented(event), 0);
  }), true);
  const withdrawIfPrevented = guarded((event) => {
    const sent = submitted.get(event);
    if (!sent || !event.defaultPrevented) return;
    submitted.delete(event);
    const at = sent.context.requests.indexOf(sent.request);
    if (at >= 0) sent.context.requests.splice(at, 1);
    scheduleReport(sent.context);
  });
  window.addEventListener("submit", withdrawIfPrevented, false);

  const leaving = guarded(() => {
    if (current && isRecent(current)) {
      current.leftPage = true;
      // The page begins to go: the first change the action made, as far as pictures go.
      noteFirstChange(current, now());
    }
    if (interval && interval.owner && interval.dirty) closeInterval(interval.owner);
    for (const context of contexts) {
      if (!context.settled || context.reportTimer !== null || context === current) report(context);
    }
  });
  // beforeunload: the page is still there to report through (by pagehide it may not be).
  window.addEventListener("beforeunload", leaving, true);
  window.addEventListener("pagehide", leaving, true);

  /** `loaded`, once the load event's own handlers ran and the page was first painted (or a
   * moment later, if no paint is recorded). */
  const sendLoaded = guarded(() => {
    if (loadedSent || !sink) return;
    loadedSent = true;
    const shown = shownAt();
    if (interval && interval.owner === loading) closeInterval(loading);
    sink.emit("loaded", { ref: loading.id, masks: masks(), shown: shown || null });
    report(loading);
  });

  window.addEventListener("load", guarded(() => {
    const send = sendLoaded;
    setTimer(guarded(() => {
      if (shownAt() || typeof PerformanceObserver !== "function") {
        send();
        return;
      }
      const observer = new PerformanceObserver(guarded(() => {
        if (!shownAt()) return;
        observer.disconnect();
        send();
      }));
      attemptOr(() => observer.observe({ type: "paint", buffered: true }));
      setTimer(guarded(() => {
        observer.disconnect();
        send();
      }), PAINT_WAIT_MS);
    }), 0);
  }), true);

  if (NativeMutationObserver) {
    const observer = new NativeMutationObserver(onMutations);
    const start = guarded(() => observer.observe(document, {
      childList: true, subtree: true, attributes: true, characterData: true,
    }));
    start();
  }
})();
