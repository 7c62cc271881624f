# Packaging shortcuts. Development itself needs none of this: see README.md (scripts/*.sh).
#   make dist        build the one-folder app dist/procedura/ with PyInstaller (installed into
#                    .venv on demand, from the [dist] extra; several minutes, ~1-2 GB of disk)
#   make dist-smoke  check that the built app runs `procedura --help` and `procedura info`
#   make clean-dist  remove build/ and dist/
#   make bench       run every benchmark (bench/run_all.py, ~25 minutes): tables on the terminal,
#                    figures in bench/results.json; `make bench-smoke` is the quick version CI runs
#   make bench-realapps  only the replays on apps nobody here wrote (bench/real_apps.py): its
#                    section of bench/results.json is replaced, the others stay
#   make icons       render resources/icons/procedura-256.png, .ico and .icns from procedura.svg
#                    (Pillow is installed into .venv on demand; the outputs are committed)

VENV := .venv
PY := $(VENV)/bin/python
SPEC := installers/pyinstaller/procedura.spec

.PHONY: dist dist-smoke clean-dist icons bench bench-smoke bench-realapps

$(PY):
	bash scripts/bootstrap.sh

dist: $(PY)
	@$(PY) -c 'import PyInstaller' 2>/dev/null || { \
		echo "==> Installing PyInstaller into $(VENV) (the [dist] extra)"; \
		$(PY) -m pip install --quiet "pyinstaller>=6"; }
	$(PY) -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller $(SPEC)
	@echo "==> Built dist/procedura/procedura; check it with: make dist-smoke"

dist-smoke:
	@test -x dist/procedura/procedura || { echo "dist-smoke: no dist/procedura/procedura; run make dist first" >&2; exit 1; }
	@home="$$(mktemp -d)"; trap 'rm -rf "$$home"' EXIT; \
	set -e; \
	echo "==> dist/procedura/procedura --help"; \
	PROCEDURA_HOME="$$home" dist/procedura/procedura --help >/dev/null; \
	echo "==> dist/procedura/procedura info (PROCEDURA_HOME=$$home)"; \
	PROCEDURA_HOME="$$home" dist/procedura/procedura info; \
	echo "==> dist-smoke passed"

clean-dist:
	rm -rf build/pyinstaller dist/procedura dist/Procedura.app

icons: $(PY)
	@$(PY) -c 'import PIL' 2>/dev/null || { \
		echo "==> Installing Pillow into $(VENV) (to write .ico and .icns)"; \
		$(PY) -m pip install --quiet "pillow>=10"; }
	$(PY) scripts/render_icons.py

bench: $(PY)
	$(PY) bench/run_all.py

bench-smoke: $(PY)
	$(PY) bench/run_all.py --smoke

bench-realapps: $(PY)
	$(PY) bench/run_all.py --only real_apps
