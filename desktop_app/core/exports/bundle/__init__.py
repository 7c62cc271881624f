"""Bundles: a workflow, its version history, the workflows it calls and its screenshots, in a zip.

Layout of a ``.procedura`` file (described for people in ``docs/export-bundle.md``)::

    manifest.json                    what is inside: every other member with its size and sha256
    workflows/<id>/v<N>.json         a workflow document: one carried version
    workflows/<id>/versions.json     that workflow's version history (metadata, no content)
    media/<sha256>.<ext>             a screenshot or image anchor a carried version references

Reading checks everything (the archive, every name, size and hash, every document) before it
returns; importing plans every write before making the first one. Errors::

    DocumentError
    └── BundleError              a bundle is malformed, hostile, inconsistent or incomplete
        └── BundleConflictError  workflows of the bundle exist here and no choice was made
    StoreError
    └── BundleWriteError         writing stopped midway; the message says what was written
"""

from desktop_app.core.exports.bundle.format import (
    BUNDLE_SUFFIX,
    MAX_BUNDLE_BYTES,
    MAX_COMPRESSION_RATIO,
    MAX_MEMBER_BYTES,
    MAX_MEMBERS,
    Bundle,
    BundleConflictError,
    BundleError,
    BundleManifest,
    BundleWriteError,
    ManifestMember,
    VersionHistory,
    VersionRecord,
)
from desktop_app.core.exports.bundle.importer import (
    Conflict,
    ImportAction,
    ImportedWorkflow,
    ImportPlan,
    ImportReport,
    OnConflict,
    Resolution,
    import_bundle,
    plan_import,
)
from desktop_app.core.exports.bundle.reader import is_bundle, read_bundle
from desktop_app.core.exports.bundle.references import media_refs
from desktop_app.core.exports.bundle.writer import build_bundle

__all__ = [
    "BUNDLE_SUFFIX",
    "MAX_BUNDLE_BYTES",
    "MAX_COMPRESSION_RATIO",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "Bundle",
    "BundleConflictError",
    "BundleError",
    "BundleManifest",
    "BundleWriteError",
    "Conflict",
    "ImportAction",
    "ImportPlan",
    "ImportReport",
    "ImportedWorkflow",
    "ManifestMember",
    "OnConflict",
    "Resolution",
    "VersionHistory",
    "VersionRecord",
    "build_bundle",
    "import_bundle",
    "is_bundle",
    "media_refs",
    "plan_import",
    "read_bundle",
]
