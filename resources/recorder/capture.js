/*
 * Procedura capture script — resources/recorder/capture.js
 *
 * Injected by the recorder with `context.add_init_script(path=...)` into every page and frame
 * (popups and iframes included). It watches what the person does and reports each action to
 * Python through the binding `window.__proceduraEmit(payloadJsonString)`, which the recorder
 * exposes with `context.expose_binding("__proceduraEmit", handler)`. Until the binding exists,
 * payloads wait in a queue that is retried every 50 ms and flushed in order.
 *
 * The script never changes what the page does: listeners run in the capture phase, are passive,
 * swallow their own errors, and prevent no default except our own hotkey (Alt+Shift+S). The
 * only DOM changes it makes are the attributes `data-procedura-target` (on the element last
 * pressed), `data-procedura-sensitive` (on fields the user marked) and `data-procedura-masked`
 * (on a field found sensitive by its label, when it gets the focus), and one adopted style
 * sheet that draws sensitive fields as dots (as password fields are) while recording. Nothing
 * is reported while `window.__proceduraInjecting === true` (Procedura's own actions).
 *
 * What the page does in response to each action is observed by `effects.js`, injected just
 * before this script: this script tells it where each action begins (`begin`) and sends its
 * reports (`effects`, `loaded`, described there) through the same binding.
 *
 * PAYLOAD PROTOCOL (the contract with the Python recorder). Every payload is a JSON object:
 *
 *   id      string   unique per page: "<random page token>-<counter>"
 *   type    string   one of the types below
 *   t       number   Date.now() when the payload was made (ms since the epoch)
 *   url     string   location.href
 *   title   string   document.title
 *   frame   string|null  null in the top frame; otherwise the frame's name, else its URL
 *
 * Every action payload (click, double_click, fill, select, check, uncheck, upload, press)
 * also carries its beginning, taken before the page saw the event that began it (the
 * pointerdown of a click, check or select made with the pointer; the first keystroke of a
 * fill; the keydown of a press):
 *
 *   action   string   the action's id: the same in every payload about it (the fills of one
 *                     typing burst) and in the `effects` reports about what it did
 *   t_start  number   when it began (ms since the epoch)
 *   url, title        where it began (these replace the common fields above)
 *   ready    number|null  when its element was last inserted or changed (see effects.js)
 *   shown    number|null  when its document first painted (see effects.js)
 *   ready_drawing, ready_drawn   number|null  when the page began, and was done, drawing
 *                     its element as it was then (null: not yet; see effects.js)
 *   address_drawn number|null  when the page was done drawing itself at its current address
 *   masks    [{x, y, width, height}]  the visible sensitive fields then (viewport pixels)
 *   scroll   {x, y}   the window's scroll offset then (the boxes above are measured at it)
 *
 * plus, per type:
 *
 *   click             {target, button: "left"|"middle"|"right", modifiers}   the element
 *                                       pressed (at pointerdown, before the page reacted),
 *                                       also when the release lands on another element
 *                                       because the press changed or covered it. Not sent
 *                                       for checkbox/radio/file inputs, labels of those,
 *                                       <select>/<option> (they report check/uncheck/upload/
 *                                       select), for the extra clicks of a double click
 *                                       (detail > 1), nor for the click a browser makes
 *                                       right after an Enter press (the press says it all).
 *                                       A pointer click targets the closest control, link or
 *                                       label around the element hit; that element also
 *                                       gets data-procedura-target="". A press whose element
 *                                       the page removed gets no click from the browser: it
 *                                       is reported as a click all the same.
 *   double_click      {target}
 *   fill              {target, value: string|null}   typing coalesced per field (input,
 *                                       textarea, contenteditable); sent at the latest 500 ms
 *                                       after the first keystroke not yet sent, so
 *                                       consecutive fills of one field mean "keep the last"
 *   select            {target, value: visible option text(s), option_value, options: the
 *                                       visible texts of all its options (at most 200)}
 *                                       (multiple selections joined with "\n"; nothing of a
 *                                       sensitive select)
 *   check / uncheck   {target}
 *   upload            {target, files: [file names]}
 *   press             {target|null, key, modifiers}   Enter, Tab, Escape, F1–F24 and shortcuts
 *                                       (a key with Control/Meta/Alt, not AltGr); `key` is the
 *                                       KeyboardEvent key ("Enter", "s", "Space"), modifiers
 *                                       are listed apart. target null when focus is on <body>.
 *                                       Enter in a textarea/editor is typing, not a press.
 *   submit            {target: the form, submitter: target|null}
 *   scroll            {dx, dy}           only just before an action (sent before it) on an
 *                                       element that was outside the viewport at the previous
 *                                       action, after the window scrolled more than 100 px
 *   sensitive_marked  {target}           Alt+Shift+S toggled data-procedura-sensitive
 *
 *   modifiers: a sorted subset of ["Alt", "Control", "Meta", "Shift"].
 *
 * Order around an action: a pending `fill` (of another field; of any field before a press,
 * select or check) is sent, then `scroll`, then the action. A pending fill is also sent before
 * submit, double_click and sensitive_marked, on blur, on change, on pagehide/visibilitychange
 * and by `__procedura.flush()` (which also has effects.js report what it holds).
 *
 * TARGET: {locators, fingerprint, sensitive, css}
 *   locators     ranked [{strategy, value[, name]}]: role (value = ARIA role, name =
 *                accessible name), label, placeholder, text, test_id, css, xpath. Every locator
 *                matched exactly this one element, as Playwright resolves it, when recorded;
 *                a strategy that would match several elements is left out.
 *   fingerprint  {tag, role, name, text, attributes, bbox: {x, y, width, height},
 *                nearby_text: [...<=4], ancestors: [...<=5], item}; keys not observed are
 *                absent. attributes: those of FINGERPRINT_ATTRIBUTES that are set (never
 *                `value`; contenteditable="" reads "true"), and `option-value`, a radio's or
 *                checkbox's own value when it is a word of the markup (never a record's key).
 *                item: {css, texts, inner} when the element is inside a repeated item (a table
 *                row, a list item, a card: `css` matches it and its siblings), `texts` the
 *                item's own short texts (cells, title; <=6, those no sibling shows first),
 *                `inner` a locator finding the element inside the item (its role and name, or
 *                an attribute selector, unique there; when an item's text does not tell
 *                it apart on the page, the item it is in is the item, and `inner` may then
 *                look inside the element's own item there: `within` {css, text}),
 *                `text_css` for each text a selector
 *                whose first match in the item holds it (or null), `own_css` one for the
 *                element itself when it shows a text, `list` (when the list can
 *                be told from the rest of the page) {css, texts, at, complete}: a selector
 *                matching the item and its siblings only, each shown item's whole text, the
 *                item's place among them, and whether none was left out or cut short
 *   sensitive    true for secret fields; their value is null in every payload and never
 *                appears in locators or fingerprint
 *   css          the unique CSS selector (also among the locators) or null
 *
 * CANDIDATE: {fingerprint, css, xpath}
 *   fingerprint  what `describe(element).fingerprint` is (the same function), but an item
 *                has only its `texts`, in page order (no `inner`: candidates stay cheap)
 *   css, xpath   the unique selectors `describe` would give (each null if there is none)
 *
 * `window.__procedura` (non-enumerable): {version, describeOnly, describe(element) ->
 * target|null, candidates() -> [CANDIDATE], flush() (send a pending fill now), errors() ->
 * internal error messages (for tests)}.
 *
 * `candidates()` lists, in document order, every element of this document (not of its frames
 * or shadow roots) that a step could act on and that is visible now: links with href, buttons,
 * inputs (not type=hidden), selects, textareas, summaries, contenteditable hosts, elements with
 * an onclick attribute or an interactive ARIA role (button, link, checkbox, radio, switch, tab,
 * menuitem[checkbox|radio], option, combobox, textbox, searchbox, slider, spinbutton,
 * treeitem), and labels tied to a form control (a recorded click can land on a label).
 * Visible: a non-zero box, rendered (not in a closed <details>), computed visibility "visible",
 * and no ancestor-or-self that is hidden, inert or aria-hidden="true". Replay matches a
 * recorded fingerprint against them (rung 2 of the healing ladder).
 *
 * DESCRIBE-ONLY MODE. When `window.__proceduraDescribeOnly === true` as the script runs, it
 * defines `window.__procedura` (the same api, `describeOnly: true`) and nothing else: no
 * listener, no MutationObserver, no timer, and nothing is ever sent. Replay injects it this
 * way with `page.evaluate` when it needs to heal. Either mode defines `__procedura` for good:
 * a later injection in the other mode changes nothing.
 */
(() => {
  "use strict";

  if (Object.prototype.hasOwnProperty.call(window, "__procedura")) return; // injected already

  /** Describe-only mode (see the header): an api for replay, no recording at all. */
  const DESCRIBE_ONLY = window.__proceduraDescribeOnly === true;

  // ── settings ─────────────────────────────────────────────────────────────────────────────

  const EMIT_RETRY_MS = 50;
  /** Typing is reported at most this long after its first keystroke not yet reported. */
  const FILL_REPORT_MS = 500;
  /** A click, check or select this soon after its pointerdown is that pointerdown's action. */
  const PRESS_CLAIM_MS = 2000;
  const MAX_OPTIONS = 200;
  const SCROLL_MIN_PX = 100;
  const ENTER_CLICK_WINDOW_MS = 500;
  const MAX_TEXT = 200;
  const MAX_LOCATOR_TEXT = 80;
  const MAX_ERRORS = 20;
  const MAX_QUEUED = 5000;

  const TARGET_ATTR = "data-procedura-target";
  /** A role locator with `nth` is emitted only among this many same-named elements. */
  const MAX_NTH = 5;
  const SENSITIVE_ATTR = "data-procedura-sensitive";
  /** Set on a field found sensitive by its label when it gets the focus (see onFocusIn). */
  const MASKED_ATTR = "data-procedura-masked";
  const OWN_ATTR_PREFIX = "data-procedura-";
  const XHTML_NS = "http://www.w3.org/1999/xhtml";

  const SENSITIVE_PATTERN = /pass(word)?|passcode|secret|token|\bpin\b|ssn|iban|cvv|cvc|otp/i;
  const SENSITIVE_AUTOCOMPLETE = new Set(["one-time-code", "current-password", "new-password"]);
  /**
   * Sensitive fields a selector can name (the recorder's SENSITIVE_CSS is the same list):
   * drawn as dots while recording. Those found by their label only get MASKED_ATTR on focus.
   */
  const SENSITIVE_SELECTOR = [
    "input[type=password i]", "input[autocomplete^=cc- i]",
    "input[autocomplete=one-time-code i]", "input[autocomplete=current-password i]",
    "input[autocomplete=new-password i]",
    ...["name", "id"].flatMap((attr) => ["pass", "secret", "token", "ssn", "iban", "cvv", "cvc",
      "otp"].map((word) => `input[${attr}*=${word} i]`)),
    "input[name=pin i]", "input[id=pin i]",
  ].join(", ");
  const FILL_INPUT_TYPES = new Set([
    "text", "email", "tel", "url", "search", "password", "number",
    "date", "time", "datetime-local", "month", "week", "color", "range",
  ]);
  const CHANGE_DRIVEN_INPUT_TYPES = new Set(["checkbox", "radio", "file"]);
  const MODIFIER_KEYS = new Set([
    "Alt", "AltGraph", "CapsLock", "Control", "Fn", "FnLock", "Hyper", "Meta", "NumLock",
    "OS", "ScrollLock", "Shift", "Super", "Symbol", "SymbolLock",
  ]);
  const IGNORED_KEYS = new Set(["Dead", "Process", "Unidentified", "Compose"]);
  const TEST_ID_ATTRIBUTES = ["data-testid", "data-test", "data-qa"];
  const FINGERPRINT_ATTRIBUTES = [
    "id", "name", "type", "class", "href", "placeholder", "aria-label", "title", "alt", "role",
    "data-testid", "data-test", "data-qa", "for", "autocomplete", "contenteditable",
  ];
  const CSS_ATTRIBUTES = [
    "data-testid", "data-test", "data-qa", "name", "aria-label", "placeholder", "title", "type",
    "for", "role",
  ];
  const ACTIONABLE_SELECTOR = [
    "a[href]", "button", "input", "select", "textarea", "label", "summary", "option",
    "[contenteditable='']", "[contenteditable='true']",
    ...["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
      "menuitemradio", "option", "treeitem", "combobox", "textbox", "searchbox"]
      .map((role) => `[role='${role}']`),
  ].join(", ");
  /** What `candidates()` lists (when visible): anything a step could act on. */
  const CANDIDATE_SELECTOR = [
    "a[href]", "area[href]", "button", "input:not([type='hidden' i])", "select", "textarea",
    "summary", "label", "[onclick]", "[contenteditable='']", "[contenteditable='true' i]",
    "[contenteditable='plaintext-only' i]",
    ...["button", "link", "checkbox", "radio", "switch", "tab", "menuitem", "menuitemcheckbox",
      "menuitemradio", "option", "combobox", "textbox", "searchbox", "slider", "spinbutton",
      "treeitem"].map((role) => `[role~='${role}' i]`),
  ].join(", ");
  /** An element inside (or being) one of these is never a candidate. */
  const UNAVAILABLE_SELECTOR = "[hidden], [inert], [aria-hidden='true' i]";
  const ROW_SELECTOR = "tr, li, [role='row'], [role='listitem']";
  const HEADING_TAGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
  const TEXT_SKIP_TAGS = new Set(["script", "noscript", "style"]);
  const ARIA_IGNORED_TAGS = new Set(["style", "script", "noscript", "template"]);
  const LABELABLE_TAGS = new Set(["button", "meter", "output", "progress", "select", "textarea"]);

  /** Tags whose implicit role gets a `role` locator (an explicit role attribute always does). */
  const IMPLICIT_ROLE_TAGS = new Set([
    "a", "button", "input", "textarea", "select", "option", "img", ...HEADING_TAGS,
  ]);
  const VALID_ROLES = new Set((
    "alert alertdialog application article banner blockquote button caption cell checkbox code " +
    "columnheader combobox complementary contentinfo definition deletion dialog directory " +
    "document emphasis feed figure form generic grid gridcell group heading img insertion link " +
    "list listbox listitem log main mark marquee math meter menu menubar menuitem " +
    "menuitemcheckbox menuitemradio navigation none note option paragraph presentation " +
    "progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox " +
    "separator slider spinbutton status strong subscript superscript switch tab table tablist " +
    "tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem").split(" "));
  const INPUT_TYPE_ROLES = {
    button: "button", checkbox: "checkbox", image: "button", number: "spinbutton",
    radio: "radio", range: "slider", reset: "button", submit: "button",
  };
  const TEXTBOX_INPUT_TYPES = new Set(["", "text", "email", "tel", "url", "search"]);
  const SIMPLE_IMPLICIT_ROLES = {
    article: "article", aside: "complementary", blockquote: "blockquote", button: "button",
    caption: "caption", code: "code", datalist: "listbox", dd: "definition", del: "deletion",
    details: "group", dfn: "term", dialog: "dialog", dt: "term", em: "emphasis",
    fieldset: "group", figure: "figure", h1: "heading", h2: "heading", h3: "heading",
    h4: "heading", h5: "heading", h6: "heading", hr: "separator", html: "document",
    ins: "insertion", li: "listitem", main: "main", mark: "mark", math: "math", menu: "list",
    meter: "meter", nav: "navigation", ol: "list", optgroup: "group", option: "option",
    output: "status", p: "paragraph", progress: "progressbar", search: "search",
    strong: "strong", sub: "subscript", sup: "superscript", svg: "img", table: "table",
    tbody: "rowgroup", textarea: "textbox", tfoot: "rowgroup", thead: "rowgroup", time: "time",
    tr: "row", ul: "list",
  };
  const NAME_PROHIBITED_ROLES = new Set([
    "caption", "code", "definition", "deletion", "emphasis", "generic", "insertion", "mark",
    "paragraph", "presentation", "strong", "subscript", "suggestion", "superscript", "term",
    "time",
  ]);
  const NAME_FROM_CONTENT_ROLES = new Set([
    "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab",
    "tooltip", "treeitem",
  ]);
  const DESCENDANT_NAME_FROM_CONTENT_ROLES = new Set([
    "", "caption", "code", "contentinfo", "definition", "deletion", "emphasis", "insertion",
    "list", "listitem", "mark", "none", "paragraph", "presentation", "region", "row",
    "rowgroup", "section", "strong", "subscript", "superscript", "table", "term", "time",
  ]);
  /** Embedded controls whose value would enter a label's text: we never read other values. */
  const VALUE_ROLES = new Set([
    "textbox", "searchbox", "combobox", "listbox", "progressbar", "scrollbar", "slider",
    "spinbutton", "meter", "menu",
  ]);
  /** Where elements of a role can be, besides anything with a role attribute. */
  const ROLE_CANDIDATES = {
    button: "button, input", link: "a, area", textbox: "input, textarea",
    searchbox: "input", combobox: "input, select", listbox: "select, datalist",
    checkbox: "input", radio: "input", spinbutton: "input", slider: "input",
    option: "option", heading: "h1, h2, h3, h4, h5, h6", img: "img, svg",
  };
  const NAME_ATTRIBUTES = ["aria-label", "title", "alt", "placeholder", "value"];
  const NAME_ATTRIBUTE_SELECTOR = NAME_ATTRIBUTES.map((a) => `[${a}]`).join(", ");
  const INPUT_DEFAULT_NAMES = "Submit Reset Choose File";
  /** What whitespace normalization drops: spaces and zero-width characters. */
  const NOT_LETTERS = /[\s\u200b\u00ad]/g;
  const TEXT_LOCATOR_ROLES = new Set([
    "button", "link", "heading", "option", "menuitem", "menuitemcheckbox", "menuitemradio",
    "tab", "treeitem",
  ]);

  // Builtins taken before page scripts run, so a page that replaces them cannot break us.
  const stringify = JSON.stringify;
  const setTimer = window.setTimeout.bind(window);
  const clearTimer = window.clearTimeout.bind(window);
  const now = Date.now;
  const NativeMutationObserver = window.MutationObserver;
  const cssEscape = (window.CSS && window.CSS.escape) ||
    ((s) => String(s).replace(/[^\w-]/g, "\\$&"));

  // ── errors: never thrown into the page ───────────────────────────────────────────────────

  const internalErrors = [];

  function noteError(error) {
    if (internalErrors.length < MAX_ERRORS) {
      internalErrors.push(String((error && (error.stack || error.message)) || error));
    }
  }

  /** `fn` wrapped so that nothing it throws reaches the page. */
  function guarded(fn) {
    return function guardedHandler(...args) {
      try {
        return fn.apply(this, args);
      } catch (error) {
        noteError(error);
        return undefined;
      }
    };
  }

  /** The value of `fn()`, or `fallback` if it throws. */
  function attempt(fn, fallback) {
    try {
      return fn();
    } catch (error) {
      noteError(error);
      return fallback;
    }
  }

  const api = Object.freeze({
    version: 2,
    describeOnly: DESCRIBE_ONLY,
    describe: guarded((element) => describe(element)),
    candidates: guarded(() => candidates()),
    flush: guarded(() => {
      flushFill();
      const observer = window.__proceduraEffects;
      if (observer) observer.flush(); // the recording ends: what each action did so far
      return true;
    }),
    errors: () => internalErrors.slice(),
  });
  Object.defineProperty(window, "__procedura", {
    value: api, enumerable: false, configurable: false, writable: false,
  });

  // ── transport ────────────────────────────────────────────────────────────────────────────

  const pageToken = randomToken();
  let payloadCounter = 0;
  const outbox = [];
  let outboxTimer = null;

  function randomToken() {
    const bytes = new Uint8Array(6);
    if (window.crypto && window.crypto.getRandomValues) window.crypto.getRandomValues(bytes);
    else for (let i = 0; i < bytes.length; i += 1) bytes[i] = Math.floor(Math.random() * 256);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function isInjecting() {
    return window.__proceduraInjecting === true;
  }

  function frameName() {
    if (window.top === window) return null;
    return window.name || location.href;
  }

  /** A payload of `type` with the common fields, not sent yet. */
  function makePayload(type, fields) {
    payloadCounter += 1;
    return Object.assign(
      {
        id: `${pageToken}-${payloadCounter}`,
        type,
        t: now(),
        url: location.href,
        title: document.title,
        frame: frameName(),
      },
      fields,
    );
  }

  /**
   * Queue `payload` for Python (dropped while Procedura injects input, and always in
   * describe-only mode); returns its id.
   */
  function send(payload) {
    if (DESCRIBE_ONLY || isInjecting()) return null;
    if (outbox.length >= MAX_QUEUED) outbox.shift(); // no binding for a long while: keep the last
    outbox.push(stringify(payload));
    drainOutbox();
    return payload.id;
  }

  function emit(type, fields) {
    return send(makePayload(type, fields));
  }

  function drainOutbox() {
    if (typeof window.__proceduraEmit !== "function") {
      if (outboxTimer === null) outboxTimer = setTimer(retryOutbox, EMIT_RETRY_MS);
      return;
    }
    while (outbox.length > 0) {
      const message = outbox.shift();
      try {
        const result = window.__proceduraEmit(message);
        if (result && typeof result.catch === "function") result.catch(() => {});
      } catch (error) {
        noteError(error);
      }
    }
  }

  const retryOutbox = guarded(() => {
    outboxTimer = null;
    drainOutbox();
  });

  // ── text helpers ─────────────────────────────────────────────────────────────────────────

  /** Whitespace collapsed the way Playwright compares text. */
  function normalizeSpace(text) {
    return String(text || "").replace(/[\u200b\u00ad]/g, "").trim().replace(/\s+/g, " ");
  }

  function clip(text, max) {
    return text.length > max ? text.slice(0, max) : text;
  }

  function isElement(node) {
    return !!node && node.nodeType === Node.ELEMENT_NODE;
  }

  function tagOf(element) {
    return element.localName.toLowerCase();
  }

  function idRefs(element, attribute) {
    const value = element.getAttribute(attribute);
    if (!value) return [];
    const root = element.getRootNode();
    const found = [];
    for (const id of value.split(/[ \t\n\f\r]+/).filter(Boolean)) {
      const ref = root.getElementById ? root.getElementById(id) : null;
      if (ref && !found.includes(ref)) found.push(ref);
    }
    return found;
  }

  /**
   * Memo of computed facts while one target is described (the DOM cannot change meanwhile):
   * styles, roles, hidden-ness, accessible names and the label index. Null outside `describe`.
   */
  let memo = null;

  function memoized(table, key, compute) {
    if (!memo) return compute();
    const map = memo[table];
    if (map.has(key)) return map.get(key);
    const value = compute();
    map.set(key, value);
    return value;
  }

  /**
   * The <label>s of a control. `element.labels` scans the whole document on each first use,
   * which is slow for thousands of candidates, so one index is built per description.
   */
  function labelsOf(element) {
    if (!memo) return Array.from(element.labels || []);
    if (!memo.labels) {
      memo.labels = new Map();
      for (const label of element.ownerDocument.querySelectorAll("label")) {
        const control = label.control;
        if (!control) continue;
        if (!memo.labels.has(control)) memo.labels.set(control, []);
        memo.labels.get(control).push(label);
      }
    }
    return memo.labels.get(element) || [];
  }

  /**
   * Run `fn` with a memo (the outer one if any). `bulk`: many elements will be described (as
   * `candidates()` does), so indexes of the whole document pay off (see `headingIndex`).
   */
  function withMemo(fn, bulk) {
    const outer = memo;
    memo = memo || {
      style: new Map(), role: new Map(), hidden: new Map(), name: new Map(), anchor: new Map(),
      cssStep: new Map(), xpathStep: new Map(), showing: new Map(), labels: null, headings: null,
      bulk: !!bulk,
    };
    try {
      return fn();
    } finally {
      memo = outer;
    }
  }

  function style(element, pseudo) {
    const compute = () => attempt(() => window.getComputedStyle(element, pseudo || null), null);
    return pseudo ? compute() : memoized("style", element, compute);
  }

  function displayOf(element) {
    const computed = style(element);
    return (computed && computed.display) || "inline";
  }

  /** Text of a subtree as Playwright's text and label engines see it (textContent-like). */
  function playwrightText(root, cache) {
    if (cache && cache.has(root)) return cache.get(root);
    let full = "";
    const skip = isElement(root) && (TEXT_SKIP_TAGS.has(tagOf(root)) ||
      (document.head && document.head.contains(root)));
    if (!skip) {
      if (isElement(root) && tagOf(root) === "input" &&
        ["submit", "button", "reset"].includes(root.type)) {
        full = root.value;
      } else {
        for (let child = root.firstChild; child; child = child.nextSibling) {
          if (child.nodeType === Node.TEXT_NODE) full += child.nodeValue || "";
          else if (isElement(child)) full += playwrightText(child, cache).full;
        }
        if (root.shadowRoot) full += playwrightText(root.shadowRoot, cache).full;
      }
    }
    const result = { full, normalized: normalizeSpace(full) };
    if (cache) cache.set(root, result);
    return result;
  }

  /** Text of `root` without `excluded`'s subtree, form controls, scripts or edited content. */
  function textWithout(root, excluded) {
    const parts = [];
    const visit = (node) => {
      if (node === excluded) return;
      if (node.nodeType === Node.TEXT_NODE) {
        parts.push(node.nodeValue || "");
        return;
      }
      if (!isElement(node)) return;
      const tag = tagOf(node);
      if (TEXT_SKIP_TAGS.has(tag) || tag === "textarea" || tag === "select" ||
        node.isContentEditable || node.getAttribute(SENSITIVE_ATTR) === "true") {
        parts.push(" ");
        return;
      }
      for (let child = node.firstChild; child; child = child.nextSibling) visit(child);
      if (displayOf(node) !== "inline") parts.push(" ");
    };
    visit(root);
    return normalizeSpace(parts.join(""));
  }

  function visibleText(element) {
    const text = element.innerText !== undefined ? element.innerText : element.textContent;
    return normalizeSpace(text);
  }

  /** Whether a secret is typed somewhere inside `element` (a sensitive editable region). */
  function containsSecret(element) {
    if (element.querySelector(`[${SENSITIVE_ATTR}="true"]`)) return true;
    const editables = element.querySelectorAll("[contenteditable]:not([contenteditable='false'])");
    return Array.from(editables).some((editable) => isSensitive(editable));
  }

  /** Visible text of `element`, leaving out any editable content when a secret is inside. */
  function safeVisibleText(element) {
    return containsSecret(element) ? textWithout(element, null) : visibleText(element);
  }

  // ── ARIA roles (as Playwright computes them) ─────────────────────────────────────────────

  function explicitRole(element) {
    const tokens = (element.getAttribute("role") || "").toLowerCase().split(" ");
    return tokens.map((t) => t.trim()).find((t) => VALID_ROLES.has(t)) || null;
  }

  function implicitInputRole(input) {
    const type = (input.type || "").toLowerCase();
    if (TEXTBOX_INPUT_TYPES.has(type)) {
      const list = idRefs(input, "list")[0];
      if (list && tagOf(list) === "datalist") return "combobox";
      return type === "search" ? "searchbox" : "textbox";
    }
    if (type === "hidden") return null;
    if (type === "file") return "button";
    return INPUT_TYPE_ROLES[type] || "textbox";
  }

  function hasExplicitName(element) {
    return element.hasAttribute("aria-label") || element.hasAttribute("aria-labelledby");
  }

  function implicitRole(element) {
    const tag = tagOf(element);
    switch (tag) {
      case "a":
      case "area":
        return element.hasAttribute("href") ? "link" : null;
      case "input":
        return implicitInputRole(element);
      case "select":
        return element.multiple || element.size > 1 ? "listbox" : "combobox";
      case "img":
        return element.getAttribute("alt") === "" && !element.getAttribute("title") &&
          !element.hasAttribute("tabindex") ? "presentation" : "img";
      case "form":
        return hasExplicitName(element) ? "form" : null;
      case "section":
        return hasExplicitName(element) ? "region" : null;
      case "header":
      case "footer": {
        const landmarkBlocker = element.parentElement &&
          element.parentElement.closest("article, aside, main, nav, section");
        if (landmarkBlocker) return null;
        return tag === "header" ? "banner" : "contentinfo";
      }
      case "td": {
        const table = element.closest("table");
        const tableRole = table ? explicitRole(table) : null;
        return tableRole === "grid" || tableRole === "treegrid" ? "gridcell" : "cell";
      }
      case "th": {
        const scope = element.getAttribute("scope");
        return scope === "row" || scope === "rowgroup" ? "rowheader" : "columnheader";
      }
      default:
        return SIMPLE_IMPLICIT_ROLES[tag] || null;
    }
  }

  function isNativelyFocusable(element) {
    const tag = tagOf(element);
    if (["button", "details", "select", "textarea"].includes(tag)) return true;
    if (tag === "a" || tag === "area") return element.hasAttribute("href");
    if (tag === "input") return !element.hidden;
    return element.hasAttribute("tabindex");
  }

  function ariaRole(element) {
    return memoized("role", element, () => computeAriaRole(element));
  }

  function computeAriaRole(element) {
    const explicit = explicitRole(element);
    if (!explicit) return implicitRole(element);
    if ((explicit === "none" || explicit === "presentation") && isNativelyFocusable(element)) {
      return implicitRole(element);
    }
    return explicit;
  }

  /** Hidden from the accessibility tree: what Playwright's role queries skip. */
  function isHiddenForAria(element) {
    if (ARIA_IGNORED_TAGS.has(tagOf(element))) return true;
    const computed = style(element);
    if (!computed) return false;
    const optionInSelect = tagOf(element) === "option" && !!element.closest("select");
    if (computed.display !== "contents" && !optionInSelect) {
      if (element.checkVisibility && !element.checkVisibility()) return true;
      if (computed.visibility !== "visible") return true;
    }
    return inHiddenSubtree(element);
  }

  /** Whether the element or an ancestor has display:none or aria-hidden="true". */
  function inHiddenSubtree(element) {
    return memoized("hidden", element, () => {
      const computed = style(element);
      if (computed && computed.display === "none") return true;
      if ((element.getAttribute("aria-hidden") || "").toLowerCase() === "true") return true;
      return !!element.parentElement && inHiddenSubtree(element.parentElement);
    });
  }

  // ── accessible names (a practical subset of accname, aligned with Playwright) ────────────

  /** The accessible name of `element`, whitespace collapsed ("" when it has none). */
  function accessibleName(element) {
    return memoized("name", element, () => {
      const role = ariaRole(element) || "";
      if (NAME_PROHIBITED_ROLES.has(role)) return "";
      const context = { visited: new Set(), position: "self", inReference: false, hidden: false };
      return normalizeSpace(textAlternative(element, context));
    });
  }

  function childContext(context) {
    return Object.assign({}, context, {
      position: context.position === "self" ? "descendant" : context.position,
    });
  }

  function referenceContext(context, reference, labelledBy) {
    return {
      visited: context.visited,
      position: null,
      inReference: true,
      labelledBy,
      hidden: context.hidden || isHiddenForAria(reference),
    };
  }

  function textAlternative(element, context) {
    if (context.visited.has(element)) return "";
    if (!context.hidden && isHiddenForAria(element)) {
      context.visited.add(element);
      return "";
    }
    const role = ariaRole(element) || "";
    const tag = tagOf(element);
    const labelledBy = idRefs(element, "aria-labelledby");

    if (!context.labelledBy && labelledBy.length > 0) {
      const text = labelledBy
        .map((ref) => textAlternative(ref, referenceContext(context, ref, true)))
        .join(" ");
      if (text) return text;
    }
    const embedded = context.inReference || context.position === "descendant";
    if (embedded && (VALUE_ROLES.has(role) || element.isContentEditable)) {
      // An embedded control or editor: Playwright would read its value. We never read
      // another field's value (it may be secret), so it contributes nothing.
      context.visited.add(element);
      return "";
    }
    const ariaLabel = element.getAttribute("aria-label") || "";
    if (ariaLabel.trim()) {
      context.visited.add(element);
      return ariaLabel;
    }
    if (role !== "presentation" && role !== "none") {
      const native = nativeTextAlternative(element, tag, labelledBy.length > 0, context);
      if (native !== null) return native;
    }
    const fromContent = NAME_FROM_CONTENT_ROLES.has(role) ||
      (context.position === "descendant" && DESCENDANT_NAME_FROM_CONTENT_ROLES.has(role)) ||
      tag === "summary" || context.inReference;
    if (fromContent) {
      context.visited.add(element);
      const text = contentText(element, childContext(context));
      if (context.position === "self" ? text.trim() : text) return text;
    }
    context.visited.add(element);
    if (role !== "presentation" && role !== "none") {
      const title = element.getAttribute("title") || "";
      if (title.trim()) return title;
    }
    return "";
  }

  /** The name from the element's own markup (labels, alt, value of input buttons), or null. */
  function nativeTextAlternative(element, tag, hasLabelledBy, context) {
    if (tag === "input") {
      const type = element.type;
      if (type === "button" || type === "submit" || type === "reset") {
        context.visited.add(element);
        if ((element.value || "").trim()) return element.value;
        if (type === "submit") return "Submit";
        if (type === "reset") return "Reset";
        return element.getAttribute("title") || "";
      }
      if (type === "file" || type === "image") {
        context.visited.add(element);
        const labels = labelsOf(element);
        if (labels.length > 0 && !context.labelledBy) return namesFromLabels(labels, context);
        if (type === "file") return "Choose File";
        const alt = element.getAttribute("alt") || "";
        if (alt.trim()) return alt;
        const title = element.getAttribute("title") || "";
        return title.trim() ? title : "Submit";
      }
    }
    if (hasLabelledBy) return tag === "img" ? imageName(element, context) : null;
    if (tag === "button") {
      const labels = labelsOf(element);
      if (labels.length > 0) {
        context.visited.add(element);
        return namesFromLabels(labels, context);
      }
      return null;
    }
    if (["textarea", "select", "input", "meter", "progress", "output"].includes(tag)) {
      context.visited.add(element);
      const labels = labelsOf(element);
      if (labels.length > 0) return namesFromLabels(labels, context);
      const title = element.getAttribute("title") || "";
      const placeholderAllowed = tag === "textarea" || (tag === "input" &&
        ["text", "password", "number", "search", "tel", "email", "url"].includes(element.type));
      if (!placeholderAllowed || title) return title;
      return element.getAttribute("placeholder") || "";
    }
    if (tag === "img") return imageName(element, context);
    if (tag === "fieldset" || tag === "table" || tag === "figure") {
      const captionTag = { fieldset: "legend", table: "caption", figure: "figcaption" }[tag];
      const caption = Array.from(element.children).find((child) => tagOf(child) === captionTag);
      if (caption) {
        context.visited.add(element);
        return textAlternative(caption, referenceContext(context, caption, false));
      }
    }
    return null;
  }

  function imageName(element, context) {
    context.visited.add(element);
    const alt = element.getAttribute("alt") || "";
    return alt.trim() ? alt : element.getAttribute("title") || "";
  }

  function namesFromLabels(labels, context) {
    return Array.from(labels)
      .map((label) => textAlternative(label, referenceContext(context, label, false)))
      .filter(Boolean)
      .join(" ");
  }

  /** CSS `content` of a pseudo element when it is plain strings / attr(), as Playwright reads. */
  function pseudoContent(element, pseudo) {
    const computed = style(element, pseudo);
    if (!computed) return "";
    const content = computed.content;
    if (!content || content === "none" || content === "normal") return "";
    if (computed.display === "none" || computed.visibility === "hidden") return "";
    const pattern = /\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|attr\(\s*([\w-]+)\s*\))/y;
    let text = "";
    let index = 0;
    while (index < content.length) {
      pattern.lastIndex = index;
      const match = pattern.exec(content);
      if (!match) {
        if (content.slice(index).trim() === "") break;
        return ""; // url(), counter(), alt text syntax…: Playwright ignores those too
      }
      if (match[3] !== undefined) text += element.getAttribute(match[3]) || "";
      else text += (match[1] !== undefined ? match[1] : match[2]).replace(/\\(.)/g, "$1");
      index = pattern.lastIndex;
    }
    if (!text) return "";
    return computed.display !== "inline" ? ` ${text} ` : text;
  }

  function contentText(element, context) {
    const tokens = [pseudoContent(element, "::before")];
    for (let child = element.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === Node.TEXT_NODE) {
        const parent = child.parentElement;
        const closedDetails = parent && tagOf(parent) === "details" && !parent.open;
        if (!closedDetails || context.hidden) tokens.push(child.nodeValue || "");
      } else if (isElement(child)) {
        let token = textAlternative(child, context);
        if (displayOf(child) !== "inline" || tagOf(child) === "br") token = ` ${token} `;
        tokens.push(token);
      }
    }
    tokens.push(pseudoContent(element, "::after"));
    return tokens.join("");
  }

  // ── labels (as Playwright's get_by_label matches them) ───────────────────────────────────

  /** The label texts Playwright's label engine sees for `element`, each normalized. */
  function playwrightLabels(element, cache) {
    const refs = idRefs(element, "aria-labelledby");
    if (refs.length > 0) return refs.map((ref) => playwrightText(ref, cache).normalized);
    const ariaLabel = element.getAttribute("aria-label");
    if (ariaLabel !== null && ariaLabel.trim()) return [normalizeSpace(ariaLabel)];
    const tag = tagOf(element);
    const labelable = LABELABLE_TAGS.has(tag) || (tag === "input" && element.type !== "hidden");
    if (!labelable) return [];
    return labelsOf(element).map((label) => playwrightText(label, cache).normalized);
  }

  /** Readable label text of a form control, without the control's own content. */
  function controlLabelText(element) {
    const refs = idRefs(element, "aria-labelledby");
    if (refs.length > 0) {
      return normalizeSpace(refs.map((ref) => textWithout(ref, element)).join(" "));
    }
    const ariaLabel = normalizeSpace(element.getAttribute("aria-label"));
    if (ariaLabel) return ariaLabel;
    const labels = labelsOf(element);
    return normalizeSpace(labels.map((label) => textWithout(label, element)).join(" "));
  }

  // ── sensitivity ──────────────────────────────────────────────────────────────────────────

  function isValueField(element) {
    const tag = tagOf(element);
    if (tag === "input") return element.type !== "hidden";
    if (tag === "textarea" || tag === "select") return true;
    if (element.isContentEditable) return true;
    return ["textbox", "searchbox", "combobox", "spinbutton"].includes(explicitRole(element));
  }

  /** Whether the element holds a secret: its value must never leave the page. */
  function isSensitive(element) {
    if (!isElement(element)) return false;
    if (element.closest(`[${SENSITIVE_ATTR}="true"]`)) return true;
    if (!isValueField(element)) return false;
    const type = tagOf(element) === "input" ? (element.type || "").toLowerCase() : "";
    if (type === "password") return true;
    const autocomplete = (element.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    if (autocomplete.some((t) => t.startsWith("cc-") || SENSITIVE_AUTOCOMPLETE.has(t))) return true;
    const names = [
      element.getAttribute("name"), element.getAttribute("id"),
      element.getAttribute("aria-label"), controlLabelText(element),
    ];
    return names.some((text) => !!text && SENSITIVE_PATTERN.test(text));
  }

  // ── unique CSS selectors and XPaths ──────────────────────────────────────────────────────

  function looksGenerated(token) {
    if (/\d{3,}/.test(token)) return true; // long digit runs: row-12345, ember1234
    if (/[:{}]/.test(token)) return true; // React useId ":r1:", templating leftovers
    return token.split(/[-_.]/).some((part) => part.length >= 6 && /[a-z]/i.test(part) &&
      (part.match(/\d/g) || []).length >= 2); // hashes: css-1x2y3z, a8f3e9c1
  }

  /**
   * Whether an option's `value` is a word of the page's own markup ("customer", "on"), not a
   * record's key ("11", "3f2a9c1e"): a key differs from one record to the next, so a locator or
   * fingerprint pinned on it would find another record.
   */
  function isWordValue(value) {
    return /[a-z]/i.test(value) && !/^[0-9a-f-]{8,}$/i.test(value) && !looksGenerated(value);
  }

  function isUsableId(id) {
    return !!id && id.length <= 64 && !/\s/.test(id) && !looksGenerated(id);
  }

  function matchesOnly(selector, element) {
    return attempt(() => {
      const found = element.ownerDocument.querySelectorAll(selector);
      return found.length === 1 && found[0] === element;
    }, false);
  }

  function cssString(value) {
    return `"${value.replace(/["\\]/g, "\\$&")}"`;
  }

  function uniqueIdSelector(element) {
    const id = element.getAttribute("id");
    if (!isUsableId(id)) return null;
    const selector = `#${cssEscape(id)}`;
    return matchesOnly(selector, element) ? selector : null;
  }

  function cssTag(element) {
    return cssEscape(tagOf(element));
  }

  /** `tag[attr="v"]` selectors, from the most to the least meaningful attribute. */
  function attributeSelectors(element) {
    const tag = cssTag(element);
    const selectors = [];
    const usable = (value) => !!value && value.length <= MAX_LOCATOR_TEXT && !/[\n\r]/.test(value);
    for (const attribute of CSS_ATTRIBUTES) {
      const value = element.getAttribute(attribute);
      if (usable(value)) selectors.push(`${tag}[${attribute}=${cssString(value)}]`);
    }
    const type = element.getAttribute("type");
    const name = element.getAttribute("name");
    if (usable(type) && usable(name)) {
      const base = `${tag}[type=${cssString(type)}][name=${cssString(name)}]`;
      selectors.push(base);
      // A radio/checkbox's value attribute is static markup (never a typed value).
      const value = element.getAttribute("value");
      const staticValue = ["radio", "checkbox"].includes(element.type) && !isSensitive(element);
      if (staticValue && usable(value) && isWordValue(value)) {
        selectors.push(`${base}[value=${cssString(value)}]`);
      }
    }
    return selectors;
  }

  function nthOfTypeStep(element) {
    return memoized("cssStep", element, () => computeNthOfTypeStep(element));
  }

  function computeNthOfTypeStep(element) {
    const tag = cssTag(element);
    const parent = element.parentElement;
    if (!parent) return tag;
    const same = Array.from(parent.children).filter((c) => c.localName === element.localName);
    return same.length === 1 ? tag : `${tag}:nth-of-type(${same.indexOf(element) + 1})`;
  }

  /** The first of `element`'s attribute selectors that matches only it, or null. */
  function uniqueAttributeSelector(element) {
    return attributeSelectors(element).find((s) => matchesOnly(s, element)) || null;
  }

  /** A unique id or attribute selector of an ancestor to start a path from, or null. */
  function anchorSelector(node) {
    return memoized("anchor", node, () => uniqueIdSelector(node) || uniqueAttributeSelector(node));
  }

  /**
   * `#anchor tr:nth-of-type(2) > td > button`: from the nearest ancestor that has a unique id
   * or attribute selector (else from the document), the shortest nth-of-type tail that is unique.
   */
  function pathSelector(element) {
    const steps = [];
    let anchor = null;
    for (let node = element; node && !anchor; node = node.parentElement) {
      anchor = node !== element ? anchorSelector(node) : null;
      if (!anchor) steps.unshift(nthOfTypeStep(node));
    }
    for (let length = 1; length <= steps.length; length += 1) {
      const tail = steps.slice(-length).join(" > ");
      const selector = anchor ? `${anchor} ${tail}` : tail;
      if (matchesOnly(selector, element)) return selector;
    }
    const full = anchor ? `${anchor} > ${steps.join(" > ")}` : null; // the path, child by child
    return full && matchesOnly(full, element) ? full : null;
  }

  /** A short CSS selector that matches only `element` now, or null. */
  function cssSelector(element) {
    if (!element.isConnected || element.getRootNode() !== element.ownerDocument) return null;
    const byId = uniqueIdSelector(element);
    if (byId) return byId;
    return uniqueAttributeSelector(element) || pathSelector(element);
  }

  function xpathLiteral(value) {
    if (!value.includes('"')) return `"${value}"`;
    if (!value.includes("'")) return `'${value}'`;
    return null;
  }

  function xpathStep(element) {
    return memoized("xpathStep", element, () => computeXpathStep(element));
  }

  function computeXpathStep(element) {
    const parent = element.parentElement;
    const same = parent
      ? Array.from(parent.children).filter((c) => c.localName === element.localName &&
        c.namespaceURI === element.namespaceURI)
      : [element];
    const index = same.indexOf(element) + 1;
    const name = element.namespaceURI === XHTML_NS
      ? tagOf(element)
      : `*[local-name()=${xpathLiteral(element.localName)}]`;
    return `${name}[${index}]`;
  }

  function xpathMatchesOnly(xpath, element) {
    return attempt(() => {
      const result = element.ownerDocument.evaluate(
        xpath, element.ownerDocument, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      return result.snapshotLength === 1 && result.snapshotItem(0) === element;
    }, false);
  }

  /** `//*[@id="x"]/div[2]/button[1]` from the nearest ancestor with a usable id, else /html/… */
  function xpathFor(element) {
    if (!element.isConnected || element.getRootNode() !== element.ownerDocument) return null;
    const steps = [];
    for (let node = element; node; node = node.parentElement) {
      const id = node.getAttribute("id");
      const literal = isUsableId(id) ? xpathLiteral(id) : null;
      if (literal && uniqueIdSelector(node)) {
        const xpath = [`//*[@id=${literal}]`, ...steps].join("/");
        if (xpathMatchesOnly(xpath, element)) return xpath;
      }
      steps.unshift(node.parentElement ? xpathStep(node) : tagOf(node));
    }
    const xpath = `/${steps.join("/")}`;
    return xpathMatchesOnly(xpath, element) ? xpath : null;
  }

  // ── locators, each kept only when it matches exactly this element ────────────────────────

  /**
   * role + name, exactly as Playwright's get_by_role finds it. When several elements share the
   * role and name (a "New contact" link in the menu and a "New contact" button on the page),
   * the locator carries `nth`, this element's index among them in document order (Playwright's
   * order), and `nth_of`, how many there were, and ranks last: it still tells the element
   * apart while the page has as many of them, but breaks if one is added before.
   */
  function roleLocator(element, role, name) {
    if (!role || !name || role === "presentation" || role === "none" || role === "generic") {
      return null;
    }
    const emitted = explicitRole(element) || IMPLICIT_ROLE_TAGS.has(tagOf(element));
    if (!emitted || isHiddenForAria(element)) return null;
    const ownSource = nameSource(element);
    const words = name.split(" ").filter((word) => ownSource.includes(word));
    let count = 0;
    let index = -1;
    const selector = ROLE_CANDIDATES[role] ? `${ROLE_CANDIDATES[role]}, [role]` : "*";
    for (const candidate of element.ownerDocument.querySelectorAll(selector)) {
      if (ariaRole(candidate) !== role) continue;
      if (candidate !== element && !words.every((w) => nameSource(candidate).includes(w))) {
        continue; // cheap test first: computing names of every button is slow on big pages
      }
      if (accessibleName(candidate) !== name || isHiddenForAria(candidate)) continue;
      if (candidate === element) index = count;
      count += 1;
      if (count > MAX_NTH) return null;
    }
    if (count === 1) return { strategy: "role", value: role, name };
    return index >= 0 ? { strategy: "role", value: role, name, nth: index, nth_of: count } : null;
  }

  /**
   * All the text an accessible name can be made of, except CSS generated content: content,
   * naming attributes (own and of descendants), labels and aria-labelledby targets.
   */
  function nameSource(element) {
    const parts = [element.textContent || ""];
    const addAttributes = (node) => {
      for (const attribute of NAME_ATTRIBUTES) {
        const value = node.getAttribute(attribute);
        if (value) parts.push(value);
      }
    };
    addAttributes(element);
    if (element.firstElementChild) {
      for (const node of element.querySelectorAll(NAME_ATTRIBUTE_SELECTOR)) addAttributes(node);
    }
    if (tagOf(element) === "input") parts.push(element.value || "", INPUT_DEFAULT_NAMES);
    for (const label of labelsOf(element)) parts.push(label.textContent || "");
    for (const ref of idRefs(element, "aria-labelledby")) parts.push(ref.textContent || "");
    return normalizeSpace(parts.join(" "));
  }

  function isFormControl(element) {
    const tag = tagOf(element);
    if (tag === "input") return element.type !== "hidden";
    if (tag === "textarea" || tag === "select") return true;
    return ["textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider",
      "spinbutton", "listbox"].includes(explicitRole(element));
  }

  function labelLocator(element) {
    if (!isFormControl(element)) return null;
    const cache = new Map();
    const ownTextInLabel = (text) => text.includes(playwrightText(element, cache).normalized) &&
      playwrightText(element, cache).normalized !== "";
    const texts = playwrightLabels(element, cache).filter((text) =>
      text && text.length <= MAX_LOCATOR_TEXT * 1.5 && !ownTextInLabel(text));
    const candidates = element.ownerDocument.querySelectorAll(
      "[aria-labelledby], [aria-label], input, select, textarea, button, meter, output, progress");
    for (const text of texts) {
      let count = 0;
      for (const candidate of candidates) {
        if (playwrightLabels(candidate, cache).includes(text)) count += 1;
        if (count > 1) break;
      }
      if (count === 1) return { strategy: "label", value: text };
    }
    return null;
  }

  function placeholderLocator(element) {
    const placeholder = element.getAttribute("placeholder");
    if (!placeholder || placeholder !== normalizeSpace(placeholder)) return null;
    const same = Array.from(element.ownerDocument.querySelectorAll("[placeholder]"))
      .filter((candidate) => candidate.getAttribute("placeholder") === placeholder);
    return same.length === 1 ? { strategy: "placeholder", value: placeholder } : null;
  }

  /** Whether Playwright's get_by_text(text, exact) would stop at `element` (not a child). */
  function matchesTextItself(element, text, cache) {
    if (TEXT_SKIP_TAGS.has(tagOf(element))) return false;
    if (playwrightText(element, cache).normalized !== text) return false;
    for (let child = element.firstElementChild; child; child = child.nextElementSibling) {
      if (playwrightText(child, cache).normalized === text) return false;
    }
    return true;
  }

  function textLocator(element, role, secretInside) {
    if (secretInside || isFormControl(element) || tagOf(element) === "input") return null;
    // Script markers inside an element (Ember's metamorphs) hold no text a person sees.
    const isLeaf = Array.from(element.children).every((child) => TEXT_SKIP_TAGS.has(tagOf(child)));
    if (!TEXT_LOCATOR_ROLES.has(role) && !isLeaf) return null;
    const cache = new Map();
    const text = playwrightText(element, cache).normalized;
    if (!text || text.length > MAX_LOCATOR_TEXT || text !== visibleText(element)) return null;
    if (!matchesTextItself(element, text, cache)) return null;
    return countTextMatches(element.ownerDocument, text, cache) === 1
      ? { strategy: "text", value: text }
      : null;
  }

  /**
   * How many elements Playwright's get_by_text(text, exact=True) finds (counting stops at 2).
   * Only ancestors of text nodes holding its longest word can match; going up, an element's
   * text only grows, so each climb stops once the text is longer than `text`.
   */
  function countTextMatches(doc, text, cache) {
    const probe = text.split(" ").reduce((a, b) => (b.length > a.length ? b : a));
    const seen = new Set();
    let count = 0;
    const letters = text.replace(NOT_LETTERS, "").length;
    for (const node of textNodesContaining(doc, probe)) {
      if (count >= 2) break;
      for (let el = node.parentElement; el && !seen.has(el); el = el.parentElement) {
        seen.add(el);
        if (hasMoreLetters(el, letters)) break;
        if (matchesTextItself(el, text, cache)) count += 1;
      }
    }
    const inputButtons = doc.querySelectorAll(
      "input[type=submit i], input[type=button i], input[type=reset i]");
    for (const input of inputButtons) {
      if (count < 2 && matchesTextItself(input, text, cache)) count += 1;
    }
    return count;
  }

  /** Whether the text of `root` has more than `limit` non-space characters (stops early). */
  function hasMoreLetters(root, limit) {
    let total = 0;
    const visit = (node) => {
      for (let child = node.firstChild; child && total <= limit; child = child.nextSibling) {
        if (child.nodeType === Node.TEXT_NODE) {
          total += (child.nodeValue || "").replace(NOT_LETTERS, "").length;
        } else if (isElement(child) && !TEXT_SKIP_TAGS.has(tagOf(child))) {
          visit(child);
        }
      }
    };
    visit(root);
    return total > limit;
  }

  /** Text nodes whose text contains `probe` (found by the browser's XPath engine). */
  function textNodesContaining(doc, probe) {
    const literal = xpathLiteral(probe);
    const nodes = [];
    if (literal) {
      const found = doc.evaluate(`//text()[contains(., ${literal})]`, doc, null,
        XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
      for (let i = 0; i < found.snapshotLength; i += 1) nodes.push(found.snapshotItem(i));
      return nodes;
    }
    const walker = doc.createTreeWalker(doc.documentElement, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if ((node.nodeValue || "").includes(probe)) nodes.push(node);
    }
    return nodes;
  }

  function testIdLocator(element) {
    for (const attribute of TEST_ID_ATTRIBUTES) {
      const value = element.getAttribute(attribute);
      if (!value) continue;
      if (!/^[\x20-\x7e]+$/.test(value) || /["\\]/.test(value)) return null;
      const selector = TEST_ID_ATTRIBUTES.map((a) => `[${a}="${value}"]`).join(", ");
      return matchesOnly(selector, element) ? { strategy: "test_id", value } : null;
    }
    return null;
  }

  // ── fingerprint ──────────────────────────────────────────────────────────────────────────

  function fingerprintAttributes(element) {
    const attributes = {};
    for (const name of FINGERPRINT_ATTRIBUTES) {
      let value = element.getAttribute(name);
      if (name === "contenteditable" && value === "") value = "true"; // "" means editable
      if (value !== null && value !== "") attributes[name] = clip(value, 1000);
    }
    // A radio's or checkbox's own value tells the options of one group apart (their `name` is
    // the group's); kept only when it is markup, never a record's key or anything typed.
    const option = tagOf(element) === "input" && ["radio", "checkbox"].includes(element.type);
    const value = option ? element.getAttribute("value") : null;
    if (value && value.length <= MAX_LOCATOR_TEXT && isWordValue(value) && !isSensitive(element)) {
      attributes["option-value"] = value;
    }
    return attributes;
  }

  function boundingBox(element) {
    const rect = element.getBoundingClientRect();
    return {
      x: Math.round(rect.x), y: Math.round(rect.y),
      width: Math.round(rect.width), height: Math.round(rect.height),
    };
  }

  /** How many elements back from a target its preceding heading is looked for. */
  const HEADING_LOOKBACK = 5000;

  function isHeading(node) {
    return HEADING_TAGS.has(tagOf(node)) || explicitRole(node) === "heading";
  }

  /** The text of the closest heading before `element` in document order (ancestors included). */
  function precedingHeadingText(element) {
    const root = element.ownerDocument.body || element.ownerDocument.documentElement;
    const heading = memo && memo.bulk
      ? indexedPrecedingHeading(element, root)
      : walkToPrecedingHeading(element, root);
    return heading ? clip(safeVisibleText(heading), MAX_TEXT) : "";
  }

  function walkToPrecedingHeading(element, root) {
    const walker = element.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    walker.currentNode = element;
    for (let steps = 0; steps < HEADING_LOOKBACK && walker.previousNode(); steps += 1) {
      if (isHeading(walker.currentNode)) return walker.currentNode;
    }
    return null;
  }

  /**
   * What `walkToPrecedingHeading` finds, from an index of `root`'s elements in document order
   * built once per memo: walking back from the element at position i visits positions i-1, i-2…
   * 0, then `root` itself, at most HEADING_LOOKBACK of them.
   */
  function indexedPrecedingHeading(element, root) {
    const index = headingIndex(root);
    const position = index.position.get(element);
    if (position === undefined) return walkToPrecedingHeading(element, root); // shadow DOM…
    const last = position > 0 ? index.lastHeading[position - 1] : -1;
    if (last >= 0 && position - last <= HEADING_LOOKBACK) return index.elements[last];
    const rootVisited = last < 0 && position + 1 <= HEADING_LOOKBACK;
    return rootVisited && isHeading(root) ? root : null;
  }

  /** {root, elements, position, lastHeading}: for each position, the last heading up to it. */
  function headingIndex(root) {
    if (memo.headings && memo.headings.root === root) return memo.headings;
    const elements = Array.from(root.getElementsByTagName("*"));
    const position = new Map();
    const lastHeading = new Int32Array(elements.length);
    let last = -1;
    elements.forEach((node, i) => {
      position.set(node, i);
      if (isHeading(node)) last = i;
      lastHeading[i] = last;
    });
    memo.headings = { root, elements, position, lastHeading };
    return memo.headings;
  }

  function legendText(element) {
    const fieldset = element.parentElement && element.parentElement.closest("fieldset");
    if (!fieldset) return "";
    const legend = Array.from(fieldset.children).find((child) => tagOf(child) === "legend");
    return legend ? clip(safeVisibleText(legend), MAX_TEXT) : "";
  }

  function rowText(element) {
    const row = element.closest(ROW_SELECTOR);
    return row ? clip(textWithout(row, element), MAX_TEXT) : "";
  }

  function nearbyText(element) {
    const texts = [
      isFormControl(element) ? clip(controlLabelText(element), MAX_TEXT) : "",
      precedingHeadingText(element),
      legendText(element),
      rowText(element),
    ];
    return texts.filter((text, index) => text && texts.indexOf(text) === index).slice(0, 4);
  }

  function ancestorLabel(element) {
    let label = tagOf(element);
    const id = element.getAttribute("id");
    if (isUsableId(id)) return `${label}#${id}`;
    const classes = Array.from(element.classList)
      .filter((c) => c.length <= 30 && !looksGenerated(c)).slice(0, 2);
    for (const name of classes) label += `.${name}`;
    return label;
  }

  function ancestors(element) {
    const result = [];
    for (let node = element.parentElement; node && result.length < 5; node = node.parentElement) {
      if (tagOf(node) === "html") break;
      result.push(ancestorLabel(node));
    }
    return result;
  }

  // ── the repeated item an element is in (a row, a list item, a card) ──────────────────────

  /** Items of repeated structures, by what they are. */
  const ITEM_SELECTOR = "tr, li, [role='row'], [role='listitem'], [role='article'], article";
  /** How far up a card (a repeated sibling of the same tag and classes) is looked for. */
  const MAX_ITEM_DEPTH = 6;
  /** How many of an item's texts are reported. */
  const MAX_ITEM_TEXTS = 6;

  /** The class part of a selector for `node` (up to two classes that look hand-written). */
  function classSelector(node) {
    return Array.from(node.classList)
      .filter((c) => c.length <= 30 && !looksGenerated(c) && /^[a-z_-][\w-]*$/i.test(c))
      .slice(0, 2).map((c) => `.${cssEscape(c)}`).join("");
  }

  /**
   * {node, css}: the item `element` is in, and a selector matching it and its siblings. Rows
   * and list items are items; so is a card, an ancestor repeated beside siblings of the same
   * tag and classes, unless `element` is a form control its own name already tells apart
   * (the repeated wrappers of a form's fields).
   */
  function repeatedItem(element, name) {
    const known = element.parentElement && element.parentElement.closest(ITEM_SELECTOR);
    if (known && known !== document.body) {
      const role = explicitRole(known);
      return { node: known, css: role ? `[role="${role}"]` : tagOf(known) };
    }
    if (name && isFormControl(element)) return null;
    let node = element.parentElement;
    for (let depth = 0; node && depth < MAX_ITEM_DEPTH; depth += 1, node = node.parentElement) {
      if (node === document.body || !node.parentElement) break;
      const classes = classSelector(node);
      if (!classes) continue;
      const css = `${cssTag(node)}${classes}`;
      const twins = Array.from(node.parentElement.children).filter((c) => c.matches(css));
      if (twins.length >= 2) return { node, css };
    }
    return null;
  }

  /** How many sibling items are looked at to order an item's texts. */
  const MAX_ITEM_SIBLINGS = 200;

  /**
   * The short texts an item shows (its cells, its title), in page order, each the whole text of
   * the smallest element holding it, leaving out `element`'s own subtree, form controls, and
   * texts without a letter (counts, record numbers). With `siblings`, the texts no sibling item
   * also shows come first.
   */
  function itemTexts(node, element, cache, siblings) {
    const collect = (shown) => {
      const texts = [];
      for (const text of ownTexts(node, element, cache, shown)) {
        if (!texts.includes(text)) texts.push(text);
        if (texts.length >= MAX_ITEM_TEXTS * 2) break;
      }
      return texts;
    };
    // An item showing no text while it is edited (its title hidden behind the edit box)
    // is still told apart by that title.
    let shown = true;
    let found = collect(true);
    if (!found.length) {
      shown = false;
      found = collect(false);
    }
    if (!siblings) return found.slice(0, MAX_ITEM_TEXTS);
    const shared = new Set();
    for (const sibling of siblings.slice(0, MAX_ITEM_SIBLINGS)) {
      for (const text of ownTexts(sibling, null, cache, shown)) shared.add(text);
    }
    const unique = found.filter((t) => !shared.has(t));
    return [...unique, ...found.filter((t) => shared.has(t))].slice(0, MAX_ITEM_TEXTS);
  }

  /** The whole texts of the smallest elements under `root` holding them (see itemTexts),
   * only those shown unless `shown` is false. */
  function* ownTexts(root, element, cache, shown = true) {
    for (const [text] of ownTextNodes(root, element, cache, shown)) yield text;
  }

  /** [text, node] for each of `ownTexts`. */
  function* ownTextNodes(root, element, cache, shown = true) {
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (element && (node === element || element.contains(node) || node.contains(element))) {
        continue;
      }
      if (isFormControl(node) || TEXT_SKIP_TAGS.has(tagOf(node))) continue;
      if (node.isContentEditable || isSensitive(node) || containsSecret(node)) continue;
      if (shown && node.checkVisibility && !node.checkVisibility()) continue; // closed lists
      if ((node.textContent || "").length > MAX_LOCATOR_TEXT * 4) continue;
      const text = playwrightText(node, cache).normalized;
      if (!text || text.length > MAX_LOCATOR_TEXT || !/\p{L}/u.test(text)) continue;
      if (matchesTextItself(node, text, cache)) yield [text, node];
    }
  }

  /** A selector whose first match inside `item` is `node` (its tag and classes, else a path
   * of tags from the item down, `:scope > td:nth-of-type(2)`), or null. */
  function selectorInside(item, node) {
    const first = (selector) => attempt(() => item.querySelector(selector), null) === node;
    const own = `${cssTag(node)}${classSelector(node)}`;
    if (first(own)) return own;
    const steps = [];
    for (let at = node; at && at !== item; at = at.parentElement) {
      const parent = at.parentElement;
      const same = parent ? Array.from(parent.children).filter((c) => tagOf(c) === tagOf(at)) : [at];
      steps.unshift(same.length > 1 ? `${cssTag(at)}:nth-of-type(${same.indexOf(at) + 1})`
        : cssTag(at));
    }
    const path = `:scope > ${steps.join(" > ")}`;
    return first(path) ? path : null;
  }

  /** How many items of a list are described with an element's item, at most. */
  const MAX_LIST_ITEMS = 100;
  /** The longest item text a list reports whole. */
  const MAX_LIST_TEXT = 500;

  /** A selector matching the item and its siblings and nothing else in the document: the
   * item's own selector under its nearest ancestor with an id or classes that tell the list
   * apart (`#invoices > tbody > tr`), or null. */
  function listSelector(item) {
    const parent = item.node.parentElement;
    const chain = [item.css];
    let node = parent;
    for (let depth = 0; node && node !== document.body && depth < 4; depth += 1) {
      const id = node.getAttribute("id");
      const anchor = isUsableId(id) ? `#${cssEscape(id)}` : classSelector(node)
        ? `${cssTag(node)}${classSelector(node)}` : null;
      if (anchor) {
        const css = `${anchor} > ${chain.join(" > ")}`;
        const found = attempt(() => Array.from(document.querySelectorAll(css)), []);
        if (found.includes(item.node) && found.every((n) => n.parentElement === parent)) {
          return css;
        }
      }
      chain.unshift(cssTag(node));
      node = node.parentElement;
    }
    return null;
  }

  /**
   * {css, texts, at, complete}: the list the item is one of, as a loop over it reads it (the
   * shown items `css` matches, each item's whole text, spaces collapsed), `at` the item's own
   * place in it; `complete` false when an item was left out or cut short. Null when the list
   * cannot be told apart from the rest of the page.
   */
  function itemList(item) {
    const css = listSelector(item);
    if (!css) return null;
    const all = attempt(() => Array.from(document.querySelectorAll(css)), []);
    const texts = [];
    let complete = all.length <= MAX_LIST_ITEMS;
    let at = null;
    for (const node of all.slice(0, MAX_LIST_ITEMS)) {
      if (!(node.offsetWidth || node.offsetHeight || node.getClientRects().length)) continue;
      if (containsSecret(node)) {
        complete = false;
        continue;
      }
      const text = (node.innerText || "").replace(/\s+/g, " ").trim();
      if (text.length > MAX_LIST_TEXT) complete = false;
      if (node === item.node) at = texts.length;
      texts.push(text.slice(0, MAX_LIST_TEXT));
    }
    return at === null ? null : { css, texts, at, complete };
  }

  /** How to find `element` inside its item: its role (and name) or an attribute, if unique. */
  function innerLocator(item, element, role, name) {
    const inside = (matches) => matches.length === 1 && matches[0] === element;
    if (role && role !== "generic" && role !== "presentation" && role !== "none") {
      const same = Array.from(item.node.querySelectorAll("*")).filter((n) =>
        ariaRole(n) === role && !isHiddenForAria(n) && (!name || accessibleName(n) === name));
      if (inside(same)) return name ? { strategy: "role", value: role, name }
        : { strategy: "role", value: role };
    }
    for (const selector of attributeSelectors(element)) {
      if (/\[value=/.test(selector)) continue;
      const matches = attempt(() => item.node.querySelectorAll(selector), []);
      if (inside(Array.from(matches))) return { strategy: "css", value: selector };
    }
    const tag = cssTag(element);
    return inside(Array.from(item.node.querySelectorAll(tag))) ? { strategy: "css", value: tag }
      : null;
  }

  /**
   * {css, texts, inner} of the repeated item `element` is in, or null (see TARGET). `full`
   * (describing a target) also orders the texts by what tells the item from its siblings and
   * finds `inner`; candidates get the texts only (their cost grows with the page).
   *
   * An item whose text does not tell it apart on the page (the wrapper of a field, one in every
   * line item, each showing "Description") gives way to the item it is in when that one's text
   * does ("Item 2"): the element is then found in that item, by its own if it is the only one
   * there, else inside its own item there (`inner.within`).
   */
  function itemContext(element, role, name, full) {
    const item = repeatedItem(element, name);
    if (!item) return null;
    const cache = new Map();
    const own = describeItem(item, element, role, name, full, cache);
    if (!own) return null;
    const ambiguous = itemsShowing(document, item.css, own.texts[0], cache) > 1;
    const found = (ambiguous && aroundItem(item, own, element, role, name, full, cache)) || own;
    return !full || found.inner ? found : null;
  }

  /** The item `item` is in, described as itemContext does, when its text tells it apart on the
   * page and the element can be found in it; else null. */
  function aroundItem(item, own, element, role, name, full, cache) {
    const outer = repeatedItem(item.node, null);
    if (!outer) return null;
    const around = describeItem(outer, element, role, name, full, cache);
    if (!around || itemsShowing(document, outer.css, around.texts[0], cache) !== 1) return null;
    if (full && !around.inner) {
      if (!own.inner || itemsShowing(outer.node, item.css, own.texts[0], cache) !== 1) return null;
      around.inner = { ...own.inner, within: { css: item.css, text: own.texts[0] } };
    }
    return around;
  }

  /** How many of the items `css` matches under `root` show `text` (as the whole text of one of
   * their elements). On the whole document, every text's count is found in one pass over the
   * items and kept for the rest of the call (candidates ask it of every row). */
  function itemsShowing(root, css, text, cache) {
    const counts = () => {
      const found = new Map();
      for (const node of attempt(() => Array.from(root.querySelectorAll(css)), [])) {
        for (const shown of new Set(ownTexts(node, null, cache))) {
          found.set(shown, (found.get(shown) || 0) + 1);
        }
      }
      return found;
    };
    const table = root === document ? memoized("showing", css, counts) : counts();
    return table.get(text) || 0;
  }

  /** {css, texts, inner, text_css, own_css, list} of `item` (see itemContext); `inner` may be
   * missing when `element` is not the only one of its kind in the item. */
  function describeItem(item, element, role, name, full, cache) {
    const parent = item.node.parentElement;
    const siblings = full && parent
      ? Array.from(parent.children).filter((c) => c !== item.node && c.matches(item.css))
      : null;
    const texts = itemTexts(item.node, element, cache, siblings);
    if (!texts.length) return null;
    if (!full) return { css: item.css, texts };
    const inner = innerLocator(item, element, role, name);
    const nodes = new Map();
    for (const shown of [true, false]) {
      for (const [text, node] of ownTextNodes(item.node, element, cache, shown)) {
        if (!nodes.has(text)) nodes.set(text, node);
      }
    }
    const textCss = texts.map((t) => (nodes.has(t) ? selectorInside(item.node, nodes.get(t)) : null));
    const result = { css: item.css, texts, text_css: textCss };
    if (inner) result.inner = inner;
    // The element's own text may be what tells the item apart (a link named after the record).
    if (playwrightText(element, cache).normalized) {
      const own = selectorInside(item.node, element);
      if (own) result.own_css = own;
    }
    const list = attempt(() => itemList(item), null);
    if (list) result.list = list;
    return result;
  }

  function fingerprint(element, role, name, secretInside, full) {
    const tag = tagOf(element);
    const result = { tag };
    if (role) result.role = role;
    if (name) result.name = name;
    let text = "";
    if (!["input", "textarea", "select"].includes(tag) && !isSensitive(element)) {
      text = clip(secretInside ? textWithout(element, null) : visibleText(element), MAX_TEXT);
    }
    if (text) result.text = text;
    result.attributes = fingerprintAttributes(element);
    result.bbox = boundingBox(element);
    result.nearby_text = nearbyText(element);
    result.ancestors = ancestors(element);
    if (!secretInside) {
      const item = attempt(() => itemContext(element, role, name, full), null);
      if (item) result.item = item;
    }
    return result;
  }

  // ── describe: the target object ──────────────────────────────────────────────────────────

  /** The target description of `element` (see TARGET in the header), or null. */
  function describe(element) {
    return isElement(element) ? withMemo(() => describeElement(element)) : null;
  }

  /** {sensitive, role, name, secretInside}: what both locators and fingerprint start from. */
  function identityOf(element) {
    const sensitive = attempt(() => isSensitive(element), true);
    const role = attempt(() => ariaRole(element), null);
    let name = attempt(() => accessibleName(element), "");
    const secretInside = attempt(() => sensitive || containsSecret(element), true);
    if (secretInside && NAME_FROM_CONTENT_ROLES.has(role)) name = ""; // its content may be secret
    return { sensitive, role, name, secretInside };
  }

  /** The fingerprint of `element` (as in TARGET), given its `identityOf`. */
  function fingerprintOf(element, identity, full) {
    const { role, name, secretInside } = identity;
    return attempt(() => fingerprint(element, role, name, secretInside, full),
      { tag: tagOf(element) });
  }

  function describeElement(element) {
    const identity = identityOf(element);
    const { sensitive, role, name, secretInside } = identity;
    const css = attempt(() => cssSelector(element), null);
    const xpath = attempt(() => xpathFor(element), null);
    const byRole = attempt(() => roleLocator(element, role, name), null);
    const ambiguousRole = byRole && byRole.nth !== undefined;
    const locators = [
      ambiguousRole ? null : byRole,
      attempt(() => labelLocator(element), null),
      attempt(() => placeholderLocator(element), null),
      attempt(() => textLocator(element, role, secretInside), null),
      attempt(() => testIdLocator(element), null),
      css ? { strategy: "css", value: css } : null,
      xpath ? { strategy: "xpath", value: xpath } : null,
      ambiguousRole ? byRole : null,
    ].filter(Boolean);
    return { locators, fingerprint: fingerprintOf(element, identity, true), sensitive, css };
  }

  // ── candidates: what replay matches a recorded fingerprint against ───────────────────────

  /**
   * Whether `element` is shown now: a box, rendered (not in a closed <details> or any other
   * content-visibility:hidden subtree), visibility "visible", nothing hidden around it.
   */
  function isShownCandidate(element) {
    const rect = element.getBoundingClientRect();
    if (!(rect.width > 0 && rect.height > 0)) return false;
    if (element.checkVisibility && !element.checkVisibility()) return false;
    const computed = style(element);
    if (!computed || computed.visibility !== "visible") return false;
    return !element.closest(UNAVAILABLE_SELECTOR) && !inHiddenSubtree(element);
  }

  /** Whether a step could act on `element` (a label only when it is tied to a control). */
  function isActionable(element) {
    return tagOf(element) !== "label" || !!element.control;
  }

  /** Every visible actionable element as a CANDIDATE (see the header), in document order. */
  function candidates() {
    return withMemo(() => {
      const found = [];
      for (const element of document.querySelectorAll(CANDIDATE_SELECTOR)) {
        if (!attempt(() => isActionable(element) && isShownCandidate(element), false)) continue;
        found.push({
          fingerprint: fingerprintOf(element, identityOf(element), false),
          css: attempt(() => cssSelector(element), null),
          xpath: attempt(() => xpathFor(element), null),
        });
      }
      return found;
    }, true);
  }

  // ── scroll: reported only when it brought the next action's element into view ────────────

  let scrollBase = { x: window.scrollX, y: window.scrollY };

  /** Before an action on `element`: send `scroll` if the window moved it into view. */
  function noteScrollBefore(element) {
    const x = window.scrollX;
    const y = window.scrollY;
    const dx = x - scrollBase.x;
    const dy = y - scrollBase.y;
    scrollBase = { x, y };
    if (!isElement(element) || Math.max(Math.abs(dx), Math.abs(dy)) <= SCROLL_MIN_PX) return;
    const rect = element.getBoundingClientRect();
    const oldTop = rect.top + dy;
    const oldLeft = rect.left + dx;
    const wasOffScreen = oldTop < 0 || oldTop >= window.innerHeight ||
      oldLeft < 0 || oldLeft >= window.innerWidth;
    if (wasOffScreen) emit("scroll", { dx: Math.round(dx), dy: Math.round(dy) });
  }

  // ── actions: what the person did, and what it began ──────────────────────────────────────

  /** The page's effects observer (effects.js), when the recorder injected it. */
  const effects = window.__proceduraEffects || null;
  let actionCounter = 0;

  /**
   * The moment an action begins, before the page sees its event: {action, t, url, title,
   * ready, masks}. `action` names the action in every payload about it (and in the effects
   * reports); `ready` is when its element was last changed (see effects.js).
   */
  function openAction(element) {
    actionCounter += 1;
    const action = `${pageToken}-a${actionCounter}`;
    const begun = effects ? effects.begin(action, isElement(element) ? element : null) : null;
    return {
      action,
      t: now(),
      url: location.href,
      title: document.title,
      ready: begun ? begun.ready : null,
      shown: begun ? begun.shown : null,
      ready_drawing: begun ? begun.ready_drawing : null,
      ready_drawn: begun ? begun.ready_drawn : null,
      address_drawn: begun ? begun.address_drawn : null,
      masks: effects ? effects.masks() : [],
      scroll: { x: window.scrollX, y: window.scrollY },
    };
  }

  /** The fields an action's payload carries about its beginning. */
  function actionFields(opened) {
    return {
      action: opened.action, t_start: opened.t, url: opened.url, title: opened.title,
      ready: opened.ready, ready_drawing: opened.ready_drawing, ready_drawn: opened.ready_drawn,
      shown: opened.shown,
      address_drawn: opened.address_drawn, masks: opened.masks, scroll: opened.scroll,
    };
  }

  // ── fill: keystrokes coalesced per field ─────────────────────────────────────────────────

  /** {element, target, opened, dirty, timer} of the field being typed in, or null. */
  let pendingFill = null;

  function editingHost(element) {
    if (!element.isContentEditable) return null;
    let host = element;
    while (host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
    return host;
  }

  /** The field an `input` event on `node` types into, or null if it is not text-like. */
  function fillField(node) {
    if (!isElement(node)) return null;
    const tag = tagOf(node);
    if (tag === "textarea") return node;
    if (tag === "input") return FILL_INPUT_TYPES.has((node.type || "").toLowerCase()) ? node : null;
    return editingHost(node);
  }

  function fieldValue(element) {
    if (isSensitive(element)) return null;
    const tag = tagOf(element);
    if (tag === "input" || tag === "textarea") return element.value;
    return (element.innerText || "").replace(/\n$/, "");
  }

  function sendFill(record) {
    if (isInjecting()) return false;
    const element = record.element;
    let target = element.isConnected ? describe(element) : record.target;
    // The row a field is in, as it was when the typing began: a row that shows the field's text
    // as it is typed (a to-do's title bound to its edit box) is told by what it showed before.
    if (record.startItem === undefined) {
      record.startItem = (record.target && record.target.fingerprint &&
        record.target.fingerprint.item) || null;
    }
    if (target && target.fingerprint && record.startItem) {
      target = { ...target, fingerprint: { ...target.fingerprint, item: record.startItem } };
    }
    record.target = target;
    send(makePayload("fill", {
      ...actionFields(record.opened), target, value: fieldValue(element),
    }));
    record.dirty = false;
    return true;
  }

  /** Send the pending fill (if anything was typed since the last one) and forget the field. */
  function flushFill() {
    const record = pendingFill;
    if (!record) return;
    if (record.dirty && !sendFill(record)) return; // keep it while Procedura injects input
    clearTimer(record.timer);
    pendingFill = null;
  }

  const sendProvisionalFill = guarded(() => {
    const record = pendingFill;
    if (!record) return;
    record.timer = null;
    if (record.dirty && !sendFill(record)) {
      record.timer = setTimer(sendProvisionalFill, FILL_REPORT_MS);
    }
  });

  function noteTyping(element) {
    if (!pendingFill || pendingFill.element !== element) {
      beginAction(element);
      pendingFill = {
        element, target: describe(element), opened: openAction(element), dirty: true, timer: null,
      };
    }
    pendingFill.dirty = true;
    // At most FILL_REPORT_MS after the first keystroke not yet reported: typing that goes on
    // is sent while it goes on, so a crash loses no more than that.
    if (pendingFill.timer === null) {
      pendingFill.timer = setTimer(sendProvisionalFill, FILL_REPORT_MS);
    }
  }

  function flushFillUnless(element) {
    if (pendingFill && pendingFill.element !== element) flushFill();
  }

  // ── what was acted on ────────────────────────────────────────────────────────────────────

  /** The element a pointer event means: the closest control, link or label around it. */
  function actionTarget(node) {
    const element = isElement(node) ? node : node && node.parentElement;
    if (!element) return null;
    return element.closest(ACTIONABLE_SELECTOR) || element;
  }

  function isChangeDrivenInput(element) {
    return !!element && tagOf(element) === "input" &&
      CHANGE_DRIVEN_INPUT_TYPES.has((element.type || "").toLowerCase());
  }

  /** Clicks that change events report better (check/uncheck/select/upload). */
  function reportedByChange(element) {
    if (isChangeDrivenInput(element)) return true;
    if (element.closest("select, option, datalist")) return true;
    const label = element.closest("label");
    return !!label && isChangeDrivenInput(label.control);
  }

  function modifiersOf(event) {
    const modifiers = [];
    if (event.altKey) modifiers.push("Alt");
    if (event.ctrlKey) modifiers.push("Control");
    if (event.metaKey) modifiers.push("Meta");
    if (event.shiftKey) modifiers.push("Shift");
    return modifiers;
  }

  function focusedElement(event) {
    const element = isElement(event.target) ? event.target : document.activeElement;
    if (!element || element === document.body || element === document.documentElement) {
      return null;
    }
    return element;
  }

  function markTarget(element) {
    for (const marked of document.querySelectorAll(`[${TARGET_ATTR}]`)) {
      if (marked !== element) marked.removeAttribute(TARGET_ATTR);
    }
    if (!element.hasAttribute(TARGET_ATTR)) element.setAttribute(TARGET_ATTR, "");
  }

  // ── sensitive fields: never readable in a picture ────────────────────────────────────────

  /**
   * Sensitive fields are drawn as dots while recording (as password fields are), so no frame
   * of the page can show what is typed there, wherever it is on the screen.
   */
  function hideSensitiveText() {
    if (typeof CSSStyleSheet !== "function" || !("adoptedStyleSheets" in document)) return;
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(
      `${SENSITIVE_SELECTOR}, [${SENSITIVE_ATTR}="true"], [${MASKED_ATTR}] ` +
      "{ -webkit-text-security: disc !important; }");
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  }

  /** A field found sensitive by its label only gets dots too, as soon as it has the focus. */
  function onFocusIn(event) {
    const element = event.target;
    if (!isElement(element) || element.hasAttribute(MASKED_ATTR)) return;
    if (isValueField(element) && isSensitive(element)) element.setAttribute(MASKED_ATTR, "");
  }

  // ── keys ─────────────────────────────────────────────────────────────────────────────────

  function isSensitiveHotkey(event) {
    return event.altKey && event.shiftKey && !event.ctrlKey && !event.metaKey &&
      (event.code === "KeyS" || (event.key || "").toLowerCase() === "s");
  }

  function isMultilineField(element) {
    return !!element && (tagOf(element) === "textarea" || element.isContentEditable);
  }

  /** The key to report for a keydown, or null when it is typing (never reported). */
  function pressedKey(event, element) {
    const key = event.key;
    if (!key || MODIFIER_KEYS.has(key) || IGNORED_KEYS.has(key)) return null;
    if (key === "Enter" && isMultilineField(element) && !event.ctrlKey && !event.metaKey &&
      !event.altKey) {
      return null; // a new line typed in a textarea or editor is part of the fill
    }
    if (key === "Enter" || key === "Tab" || key === "Escape") return key;
    if (/^F\d{1,2}$/.test(key)) return key;
    const altGraph = event.getModifierState && event.getModifierState("AltGraph");
    if (altGraph) return null; // AltGr composes characters: typing
    const name = key === " " ? "Space" : key;
    if (event.ctrlKey || event.metaKey) return name;
    if (event.altKey) {
      // macOS Option+key types characters (π, ß): typing, not a shortcut.
      if (key.length === 1 && !/^[\x21-\x7e]$/.test(key)) return null;
      return name;
    }
    return null;
  }

  function toggleSensitive(element) {
    const marking = element.getAttribute(SENSITIVE_ATTR) !== "true";
    if (marking) element.setAttribute(SENSITIVE_ATTR, "true");
    flushFill(); // while the field is sensitive either way, so its value stays null
    if (!marking) element.removeAttribute(SENSITIVE_ATTR);
    emit("sensitive_marked", { target: describe(element) });
  }

  // ── event handlers ───────────────────────────────────────────────────────────────────────

  let lastEnterPress = 0;
  /**
   * The last pointerdown: {element, target, opened, t}. The click, check, select or double
   * click it begins is reported with this element and this beginning, described before the
   * page reacted: a press that changes or covers the element makes the browser send the
   * click to an ancestor (often <body>).
   */
  let pressed = null;

  /**
   * What precedes an action's payload, in this order: a pending fill (of another field,
   * unless `flushAll`) is sent, and a scroll that brought `element` into view is reported.
   */
  function beginAction(element, flushAll) {
    if (flushAll) flushFill();
    else flushFillUnless(element);
    noteScrollBefore(element);
  }

  /** The pointerdown this action on `element` comes from, if any (and forgets it). */
  function claimPress(element) {
    const press = pressed;
    if (!press || now() - press.t > PRESS_CLAIM_MS) return null;
    const same = press.element === element || !press.element.isConnected ||
      (isElement(element) && (element.contains(press.element) || press.element.contains(element))) ||
      (tagOf(press.element) === "label" && press.element.control === element);
    if (!same) return null;
    pressed = null;
    return press;
  }

  function onPointerDown(event) {
    if (!event.isTrusted || isInjecting()) return;
    const element = actionTarget(event.target);
    if (!element) return;
    beginAction(element);
    markTarget(element);
    const target = describe(element);
    pressed = {
      element, target, opened: openAction(element), t: now(),
      button: ["left", "middle", "right"][event.button] || "left", modifiers: modifiersOf(event),
    };
  }

  /**
   * A press whose element the page removed or hid by the release gets no click from the
   * browser (or one on something else); the page acted on the press (a menu, a button that
   * works on mousedown, a custom list's option chosen on mouseup), so it is reported as the
   * click it was, unless a click or change claims it meanwhile.
   */
  function onPointerUp(event) {
    if (!event.isTrusted || isInjecting()) return;
    const press = pressed;
    if (!press) return;
    // Released over something the press opened on top of it (a dropdown's mask)?
    const covered = isElement(event.target) && !press.element.contains(event.target) &&
      !event.target.contains(press.element);
    setTimer(guarded(() => {
      // A click, check or select took it (a click on a checkbox hands it on to the change
      // that follows, or reports it itself if none comes: see reportIfNoChange).
      if (pressed !== press || press.clicked) return;
      const shown = press.element.isConnected && attempt(() => onScreen(press.element), true);
      if (shown && !covered) return; // no click came, and nothing happened to what was pressed
      pressed = null;
      if (reportedByChange(press.element)) return;
      send(makePayload("click", {
        ...actionFields(press.opened), target: press.target, button: press.button,
        modifiers: press.modifiers,
      }));
    }), 0);
  }

  function onClick(event) {
    if (!event.isTrusted || isInjecting()) return;
    if (event.detail > 1) return; // the 2nd click of a double click: see double_click
    // detail 0: a click made by the keyboard; after Enter, the press already tells it.
    if (event.detail === 0 && now() - lastEnterPress < ENTER_CLICK_WINDOW_MS) return;
    const element = actionTarget(event.target);
    if (!element) {
      // Something the press opened took the release (a dropdown's mask), and the browser sent
      // the click to what both share: it is the click of what was pressed.
      const held = pressed;
      if (held && isElement(event.target) && event.target.contains(held.element) &&
        claimPress(held.element) && !reportedByChange(held.element)) {
        send(makePayload("click", {
          ...actionFields(held.opened), target: held.target, button: held.button,
          modifiers: held.modifiers,
        }));
      }
      return;
    }
    const press = claimPress(element);
    if (reportedByChange(press ? press.element : element)) {
      if (press) {
        pressed = press; // the change event that follows claims it
        press.clicked = true;
        reportIfNoChange(press, element);
      }
      return;
    }
    let target;
    let opened;
    if (press) {
      target = press.target; // the element pressed, as it was before the page reacted
      opened = press.opened;
    } else {
      beginAction(element);
      target = describe(element);
      opened = openAction(element);
    }
    send(makePayload("click", {
      ...actionFields(opened),
      target,
      button: press ? press.button : ["left", "middle", "right"][event.button] || "left",
      modifiers: press ? press.modifiers : modifiersOf(event),
    }));
  }

  /**
   * A checkbox or radio button the page re-renders in its click handler (Backbone's to-do list)
   * fires its change on the detached element, which reaches nobody: the click is reported as
   * the check it was, with the state the click gave it, unless a change claims the press.
   */
  function reportIfNoChange(press, element) {
    const input = isChangeDrivenInput(element) ? element
      : (element.closest("label") || {}).control;
    if (!input || (input.type !== "checkbox" && input.type !== "radio")) return;
    const checked = input.checked; // already toggled as the click is dispatched
    setTimer(guarded(() => {
      if (pressed !== press) return; // a change took it
      pressed = null;
      send(makePayload(checked ? "check" : "uncheck", {
        ...actionFields(press.opened), target: press.target,
      }));
    }), 0);
  }

  function onDoubleClick(event) {
    if (!event.isTrusted || isInjecting()) return;
    const element = actionTarget(event.target);
    if (!element || reportedByChange(element)) return;
    flushFillUnless(element);
    const press = claimPress(element);
    const opened = press ? press.opened : openAction(element);
    send(makePayload("double_click", {
      ...actionFields(opened), target: press ? press.target : describe(element),
    }));
  }

  function onInput(event) {
    if (isInjecting()) return;
    const field = fillField(event.target);
    if (field) noteTyping(field);
  }

  /** The beginning of a change-driven action: its pointerdown's, or now. */
  function changeOpened(element) {
    const press = claimPress(element);
    if (press) return press.opened;
    beginAction(element, true);
    return openAction(element);
  }

  /** Whether a person could see `element`: a box of its own, inside the document's area. */
  function onScreen(element) {
    if (!isElement(element) || !element.isConnected) return false;
    if (element.checkVisibility && !element.checkVisibility()) return false;
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0 &&
      rect.right + window.scrollX > 0 && rect.bottom + window.scrollY > 0;
  }

  /** When the person last pressed a button or a key (a trusted pointerdown or keydown). */
  let lastPersonInput = -Infinity;

  const notePersonInput = (event) => {
    if (event.isTrusted && !isInjecting()) lastPersonInput = now();
  };

  function onChange(event) {
    if (isInjecting()) return;
    const element = event.target;
    // A change to a control nobody can see, with nobody acting, is not the person's: a
    // library clicking a checkbox of its own off-screen as it loads (the browser calls the
    // change it fires then trusted). A hidden control a widget changes for the person's click
    // on it (a custom checkbox's input) follows their press; a file chosen in the browser's
    // own dialog may come long after the press that opened it.
    const file = isElement(element) && tagOf(element) === "input" && element.type === "file";
    if (!file && now() - lastPersonInput > PRESS_CLAIM_MS && !attempt(() => onScreen(element),
      true)) return;
    if (!isElement(element)) return;
    const tag = tagOf(element);
    if (tag === "select") {
      flushFill();
      const opened = changeOpened(element);
      send(makePayload("select", { ...actionFields(opened), ...selectFields(element) }));
    } else if (isChangeDrivenInput(element)) {
      flushFill();
      const opened = changeOpened(element);
      const fields = { ...actionFields(opened), target: describe(element) };
      if (element.type === "file") {
        fields.files = isSensitive(element) ? [] : Array.from(element.files || [], (f) => f.name);
        send(makePayload("upload", fields));
      } else {
        send(makePayload(element.checked ? "check" : "uncheck", fields));
      }
    } else if (pendingFill && pendingFill.element === fillField(element)) {
      flushFill();
    }
  }

  function selectFields(select) {
    const chosen = Array.from(select.selectedOptions || []);
    const sensitive = isSensitive(select);
    const label = (o) => normalizeSpace(o.label || o.text);
    return {
      target: describe(select),
      value: sensitive ? null : chosen.map(label).join("\n"),
      option_value: sensitive ? null : chosen.map((o) => o.value).join("\n"),
      options: sensitive ? [] : Array.from(select.options || []).slice(0, MAX_OPTIONS).map(label),
    };
  }

  function onKeyDown(event) {
    if (!event.isTrusted || isInjecting() || event.isComposing) return;
    if (isSensitiveHotkey(event)) {
      const element = focusedElement(event);
      if (!element) return;
      event.preventDefault(); // our hotkey: the only default we ever prevent
      toggleSensitive(element);
      return;
    }
    const element = focusedElement(event);
    const key = pressedKey(event, element);
    if (!key) return;
    beginAction(element, true);
    if (key === "Enter") lastEnterPress = now();
    const target = element ? describe(element) : null;
    const opened = openAction(element);
    send(makePayload("press", {
      ...actionFields(opened), target, key, modifiers: modifiersOf(event),
    }));
  }

  function onFocusOut(event) {
    if (isInjecting() || !pendingFill) return;
    if (pendingFill.element === event.target) flushFill();
  }

  function onSubmit(event) {
    if (isInjecting()) return;
    flushFill();
    const submitter = isElement(event.submitter) ? describe(event.submitter) : null;
    emit("submit", { target: describe(event.target), submitter });
  }

  function onPageLeaving() {
    flushFill();
  }

  function onVisibilityChange() {
    if (document.visibilityState === "hidden") flushFill();
  }

  // ── installation ─────────────────────────────────────────────────────────────────────────

  const PASSIVE_CAPTURE = { capture: true, passive: true };

  function listen(target, type, handler, options) {
    target.addEventListener(type, guarded(handler), options || PASSIVE_CAPTURE);
  }

  if (DESCRIBE_ONLY) return; // an api for replay: no listener, no observer, no timer

  if (effects) {
    effects.attach({
      emit: (type, fields) => emit(type, fields),
      isSensitive: (element) => attempt(() => isSensitive(element), true),
      fieldLabel: (element) => attempt(() => clip(controlLabelText(element) ||
        element.getAttribute("aria-label") || element.getAttribute("placeholder") ||
        element.getAttribute("name") || element.id || "", MAX_TEXT), ""),
    });
  }
  attempt(hideSensitiveText, undefined);
  listen(window, "pointerdown", notePersonInput, { capture: true, passive: true });
  listen(window, "keydown", notePersonInput, { capture: true, passive: true });
  listen(window, "pointerdown", onPointerDown);
  listen(window, "pointerup", onPointerUp);
  listen(window, "click", onClick);
  listen(window, "dblclick", onDoubleClick);
  listen(window, "input", onInput);
  listen(window, "change", onChange);
  listen(window, "keydown", onKeyDown, { capture: true, passive: false });
  listen(window, "focusin", onFocusIn);
  listen(window, "focusout", onFocusOut);
  listen(window, "submit", onSubmit);
  listen(window, "pagehide", onPageLeaving);
  listen(window, "beforeunload", onPageLeaving);
  listen(document, "visibilitychange", onVisibilityChange);
})();
