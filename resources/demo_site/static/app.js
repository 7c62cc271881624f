// Acme CRM — small enhancements. Hooks are data-js attributes, never ids or classes, so the
// renamed-ids variant does not touch them. Every page works without this file except the slow
// variant, whose content is revealed here.
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

  function start() {
    wireConsent();
    wireAnnouncement();
    revealDeferred();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
