// The healing benchmark's page script (bench/healing.py installs it in every page of a case).
//
// window.__healingSpec, set just before this runs, names one element of the demo app (the
// page path, its action-log key and which of the elements with that key) and one mutation;
// once the page is parsed the element is mutated, on every page load where it appears. Without
// a spec (the reference run) nothing changes. Either way window.__healingBench.inspect(el)
// tells the benchmark which element the replay engine is about to act on.
"use strict";

(function () {
  const spec = window.__healingSpec || null;
  const state = { target: null, applied: false, reason: "" };

  // ── the action log's element keys: app.js's own (it runs before the page is parsed) ──
  const FIELDS = "input, select, textarea";
  const CANDIDATES = "a, button, input, select, textarea, label, summary, [role], [data-testid]";

  function squeeze(text, limit) {
    return (text || "").replace(/\s+/g, " ").trim().slice(0, limit);
  }

  function keyOf(element) {
    return window.__acmeActionKey(element);
  }

  // ── what an element is, for the benchmark ──

  function sameKey(key) {
    return Array.prototype.filter.call(document.querySelectorAll(CANDIDATES), function (el) {
      return keyOf(el) === key;
    });
  }

  function isField(el) {
    return el.matches(FIELDS);
  }

  // The visible words that name the element: a field's label, else its own text.
  function labelOf(el) {
    if (isField(el)) {
      const label = el.labels && el.labels.length ? el.labels[0].textContent : "";
      return squeeze(label || el.getAttribute("aria-label") || "", 80);
    }
    return squeeze(el.getAttribute("aria-label") || el.textContent, 80);
  }

  // A field's own block (its label and input), or the element itself.
  function blockOf(el) {
    const field = isField(el) ? el.closest(".field") : null;
    return field && field.querySelectorAll(FIELDS).length === 1 ? field : el;
  }

  function describe(el) {
    const key = keyOf(el);
    return {
      key: key,
      ordinal: sameKey(key).indexOf(el),
      path: location.pathname,
      label: labelOf(el),
      renamable: Boolean(el.id || el.classList.length),
    };
  }

  // ── the mutations; each returns "" once applied, or why it cannot apply ──

  // Attributes the app needs to keep working: the form data the server reads, where links
  // go, and the state of a control. Everything else may go.
  const NEEDED = new Set(["name", "value", "type", "href", "checked", "selected", "disabled"]);

  function relabelFor(root, oldId, newId) {
    root.querySelectorAll('label[for="' + CSS.escape(oldId) + '"]').forEach(function (label) {
      label.htmlFor = newId;
    });
  }

  function setWords(el, from, to) {
    if (el.getAttribute("aria-label")) {
      el.setAttribute("aria-label", to);
    }
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let replaced = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeValue.includes(from)) {
        node.nodeValue = node.nodeValue.replace(from, to);
        replaced = true;
      }
    }
    if (!replaced) {
      el.textContent = to;
    }
  }

  const MUTATIONS = {
    renamed: function (el) {
      if (!el.id && !el.classList.length) {
        return "it has no id or class";
      }
      if (el.id) {
        const renamed = "m-" + el.id.replace(/_/g, "-") + "-v2";
        relabelFor(document, el.id, renamed);
        el.id = renamed;
      }
      const classes = Array.from(el.classList).map(function (name) {
        return name.replace(/-/g, "_") + "_x7f3a";
      });
      el.className = classes.join(" ");
      return "";
    },

    text: function (el) {
      const words = labelOf(el);
      if (!spec.text || !words) {
        return "it has no words with a synonym";
      }
      if (isField(el)) {
        Array.from(el.labels || []).forEach(function (label) {
          setWords(label, words, spec.text);
        });
        if (el.getAttribute("aria-label")) {
          el.setAttribute("aria-label", spec.text);
        }
      } else {
        setWords(el, words, spec.text);
      }
      return "";
    },

    moved: function (el) {
      const block = blockOf(el);
      const home = block.parentElement;
      const container =
        (home && home.closest("fieldset, form, main")) || document.querySelector("main");
      if (!container) {
        return "there is nowhere to move it";
      }
      if (container.firstElementChild === block) {
        container.appendChild(block);
      } else {
        container.insertBefore(block, container.firstChild);
      }
      return "";
    },

    wrapped: function (el) {
      const wrapper = document.createElement(el.matches("a, button") ? "span" : "div");
      el.parentNode.insertBefore(wrapper, el);
      wrapper.appendChild(el);
      return "";
    },

    sibling: function (el) {
      const block = blockOf(el);
      const twin = block.cloneNode(true);
      const control = block === el ? twin : twin.querySelector(el.tagName);
      if (control.id) {
        relabelFor(twin, control.id, control.id + "-alt");
        control.id += "-alt";
      }
      const testId = control.getAttribute("data-testid");
      if (testId) {
        control.setAttribute("data-testid", testId + "-alt");
      }
      if (isField(el)) {
        control.setAttribute("name", (control.getAttribute("name") || "field") + "_alt");
        control.removeAttribute("value");
        control.checked = false;
        const label = block === el ? null : twin.querySelector("label");
        if (label) {
          label.textContent = spec.text;
        } else {
          control.setAttribute("aria-label", spec.text);
        }
      } else {
        setWords(control, labelOf(el), spec.text);
        if (control.tagName === "BUTTON") {
          control.setAttribute("type", "button"); // a look-alike that never submits the form
          if (control.getAttribute("value")) {
            control.setAttribute("value", control.getAttribute("value") + "_alt");
          }
        }
        const href = control.getAttribute("href");
        if (href) {
          control.setAttribute("href", href + (href.includes("?") ? "&" : "?") + "alt=1");
        }
      }
      block.parentNode.insertBefore(twin, block);
      return "";
    },

    attributes: function (el) {
      const removable = Array.from(el.attributes)
        .map(function (attr) {
          return attr.name;
        })
        .filter(function (name) {
          return !NEEDED.has(name);
        });
      if (!removable.length) {
        return "it has only attributes the app needs";
      }
      removable.forEach(function (name) {
        el.removeAttribute(name);
      });
      return "";
    },
  };

  function apply() {
    if (!spec || location.pathname !== spec.path || state.target) {
      return;
    }
    const el = sameKey(spec.key)[spec.ordinal];
    if (!el) {
      state.reason = "the element is not on the page";
      if (document.readyState === "complete") {
        report();
      }
      return;
    }
    state.target = el;
    state.reason = MUTATIONS[spec.kind](el);
    state.applied = state.reason === "";
    report();
  }

  // Tell the benchmark what became of the element (window.__healingReport, a Playwright binding).
  function report() {
    if (typeof window.__healingReport === "function") {
      window.__healingReport({
        path: location.pathname,
        applied: state.applied,
        reason: state.reason,
        targetKey: state.target ? keyOf(state.target) : null,
      });
    }
  }

  window.__healingBench = {
    describe: describe,
    // The element the engine is about to act on, and whether it is the mutated one.
    inspect: function (el) {
      return {
        element: describe(el),
        isTarget: state.target !== null && el === state.target,
      };
    },
  };

  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", apply);
  } else {
    apply();
  }
})();
