// Acme CRM — small enhancements. Hooks are data-js attributes, never ids or classes, so the
// renamed-ids variant does not touch them. Every page works without this file except the slow
// variant, whose content is revealed here. It also reports each click, change and submit to the
// test-only action log (POST /__actions).
"use strict";

(function () {
  // The slow variant: the page content waits in a <template> behind a spinner.
  function revealDeferred() {
    const template = document.querySelector('template[data-js="deferred"]');
    if (!template) {
      return;
    }
    const delay = Number(template.getAttribute("data-delay-ms")) || 0;
    window.setTimeout(function () {
      const spinner = document.querySelector('[data-js="spinner"]');
      template.replaceWith(template.content.cloneNode(true));
      if (spinner) {
        spinner.remove();
      }
      const autofocus = document.querySelector("main [autofocus]");
      if (autofocus) {
        autofocus.focus();
      }
      document.dispatchEvent(new CustomEvent("acme:content-ready"));
    }, delay);
  }

  // Cookie consent: remember the choice in a cookie and remove the overlay, without a reload.
  function wireConsent() {
    const form = document.querySelector('form[data-js="consent"]');
    if (!form) {
      return;
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      document.cookie = "acme_consent=accepted; path=/; max-age=31536000; SameSite=Lax";
      const overlay = document.querySelector('[data-js="consent-overlay"]');
      if (overlay) {
        overlay.remove();
      }
    });
  }

  // The announcement: tell the server it was dismissed, then remove the overlay.
  function wireAnnouncement() {
    const form = document.querySelector('form[data-js="announcement"]');
    if (!form) {
      return;
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      const button = form.querySelector("button");
      if (button) {
        button.disabled = true;
      }
      fetch(form.action, {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { "X-Requested-With": "fetch" },
        credentials: "same-origin",
      })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("dismiss failed: " + response.status);
          }
          const overlay = document.querySelector('[data-js="announcement-overlay"]');
          if (overlay) {
            overlay.remove();
          }
        })
        .catch(function () {
          form.submit();
        });
    });
  }

  // ── The action log: which element each click, change and submit reached ──
  // Each record goes to POST /__actions, where tests read it back (DemoSite.actions()). It
  // listens in the capture phase, never prevents a default, and swallows its own errors.
  const INTERACTIVE = [
    "a",
    "button",
    "input",
    "select",
    "textarea",
    "label",
    "summary",
    '[role="button"]',
    '[role="link"]',
    '[role="checkbox"]',
    '[role="radio"]',
    '[role="switch"]',
    '[role="tab"]',
    '[role="menuitem"]',
    '[role="menuitemcheckbox"]',
    '[role="menuitemradio"]',
    '[role="option"]',
    '[role="combobox"]',
  ].join(", ");
  const FIELDS = "input, select, textarea";
  const MAX_VALUE = 1000;
  const MAX_TEXT = 80;
  const MAX_KEY = 300;
  let sequence = 0;
  const edited = new Set();

  function squeeze(text, limit) {
    return (text || "").replace(/\s+/g, " ").trim().slice(0, limit);
  }

  function typeOf(element) {
    return (element.getAttribute("type") || "").toLowerCase();
  }

  function isSubmitter(element) {
    const type = typeOf(element);
    if (element.tagName === "BUTTON") {
      return type === "" || type === "submit";
    }
    return element.tagName === "INPUT" && (type === "submit" || type === "image");
  }

  // The other controls in the same form (or page) with the same name, the element included.
  function namesakes(element, name) {
    const scope = element.form || document;
    return Array.prototype.filter.call(scope.querySelectorAll("[name]"), function (other) {
      return other.getAttribute("name") === name && other.tagName === element.tagName;
    });
  }

  // name:<name>, with =<value> for buttons and radios (and checkboxes that share their name)
  // and [<n>] for a text field whose name repeats in its form (the rows of expense items).
  function nameKey(element, name) {
    const type = typeOf(element);
    const value = element.getAttribute("value") || "";
    if (isSubmitter(element) || type === "radio") {
      return "name:" + name + "=" + value;
    }
    const same = namesakes(element, name);
    if (same.length < 2) {
      return "name:" + name;
    }
    if (type === "checkbox") {
      return "name:" + name + "=" + value;
    }
    return "name:" + name + "[" + same.indexOf(element) + "]";
  }

  // An address as a key: path and query on this site, the whole address elsewhere.
  function addressKey(raw) {
    const url = new URL(raw, location.href);
    url.hash = "";
    return url.origin === location.origin ? url.pathname + url.search : url.href;
  }

  // A jump within the page: its #fragment is an id, which the renamed-ids variant changes.
  function isJump(raw) {
    const url = new URL(raw, location.href);
    const here = location.origin + location.pathname + location.search;
    return url.hash !== "" && url.origin + url.pathname + url.search === here;
  }

  // A stable identity, the same under every drift variant: data-testid, else the field name,
  // else the link's target or the form's action, else the tag and the text.
  function keyOf(element) {
    const testId = element.getAttribute("data-testid");
    if (testId) {
      return "testid:" + testId;
    }
    const name = element.getAttribute("name");
    if (name && element.matches(FIELDS + ", button")) {
      return nameKey(element, name);
    }
    const href = element.tagName === "A" ? element.getAttribute("href") : null;
    if (href !== null && !isJump(href)) {
      return "link:" + addressKey(href);
    }
    if (element.tagName === "FORM") {
      return "form:" + addressKey(element.getAttribute("action") || location.href);
    }
    return element.tagName.toLowerCase() + ":" + squeeze(element.textContent, MAX_TEXT);
  }

  function isDecoy(element) {
    return Boolean(element && element.closest("[data-decoy]"));
  }

  function send(kind, element, value, decoy) {
    sequence += 1;
    const record = {
      kind: kind,
      element: keyOf(element).slice(0, MAX_KEY),
      decoy: decoy,
      path: location.pathname,
      value: value,
      seq: sequence,
      page: performance.timeOrigin,
      t: performance.timeOrigin + performance.now(),
    };
    const body = JSON.stringify(record);
    if (!navigator.sendBeacon("/__actions", body)) {
      fetch("/__actions", { method: "POST", body: body, keepalive: true }).catch(function () {});
    }
  }

  // The value a change reports: a check box's state, a field's text; never a password.
  function valueOf(field) {
    const type = typeOf(field);
    if (type === "password") {
      return null;
    }
    if (type === "checkbox" || type === "radio") {
      return field.checked;
    }
    return String(field.value).slice(0, MAX_VALUE);
  }

  // What a click reached: the closest interactive element. A click on a field's label is left
  // out: the browser clicks the field itself next, which is what gets reported.
  function clicked(target) {
    const element = target instanceof Element ? target.closest(INTERACTIVE) : null;
    return element && element.tagName === "LABEL" && element.control ? null : element;
  }

  function guarded(handler) {
    return function (event) {
      try {
        handler(event);
      } catch (error) {
        // The log must never break the page.
      }
    };
  }

  function onClick(event) {
    const element = clicked(event.target);
    if (element) {
      send("click", element, null, isDecoy(element));
    }
  }

  function onInput(event) {
    if (event.target instanceof Element && event.target.matches(FIELDS)) {
      edited.add(event.target);
    }
  }

  function onChange(event) {
    const field = event.target;
    if (field instanceof Element && field.matches(FIELDS)) {
      edited.delete(field);
      send("change", field, valueOf(field), isDecoy(field));
    }
  }

  function onSubmit(event) {
    const form = event.target;
    const submitter = event.submitter || null;
    const value = submitter ? keyOf(submitter) : null;
    send("submit", form, value, isDecoy(form) || isDecoy(submitter));
  }

  // Leaving the page with a field still being edited: report its change, which never fired.
  function onPageHide() {
    edited.forEach(function (field) {
      if (field.isConnected) {
        send("change", field, valueOf(field), isDecoy(field));
      }
    });
    edited.clear();
  }

  function wireActionLog() {
    window.addEventListener("click", guarded(onClick), true);
    window.addEventListener("input", guarded(onInput), true);
    window.addEventListener("change", guarded(onChange), true);
    window.addEventListener("submit", guarded(onSubmit), true);
    window.addEventListener("pagehide", guarded(onPageHide), true);
  }

  function start() {
    wireConsent();
    wireAnnouncement();
    revealDeferred();
  }

  // The action log listens from before the body is parsed (this script is not deferred): an
  // element can be acted on as soon as it is parsed, before the document is complete. Its keys
  // are shared with test and benchmark scripts that must name elements the same way.
  wireActionLog();
  window.__acmeActionKey = keyOf;
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
