<#
.SYNOPSIS
    Install Procedura for the current user on Windows (no administrator rights needed).

.DESCRIPTION
    Creates a virtual environment in %LOCALAPPDATA%\Programs\Procedura\venv, installs Procedura
    into it with pip (from this checkout, another source tree, or a wheel), writes a launcher
    %LOCALAPPDATA%\Programs\Procedura\bin\procedura.cmd and adds that folder to the user's PATH,
    and creates a Start menu shortcut (and, with -Autostart, a Startup shortcut that starts the
    tray). Everything it creates is listed in %LOCALAPPDATA%\Programs\Procedura\install-manifest.txt,
    which uninstall.ps1 reads. Running it again upgrades in place.

    Your data is elsewhere: Procedura keeps it in %LOCALAPPDATA%\Procedura (platformdirs' user
    data dir; PROCEDURA_HOME overrides it), which uninstall.ps1 keeps unless -PurgeData.

    NOT TESTED: written with care but never run (the project's CI runs Linux only).

.PARAMETER Source
    A Procedura source tree (default: the checkout this script is in).
.PARAMETER Wheel
    A procedura .whl file to install instead of a source tree.
.PARAMETER Autostart
    Also start the tray at login (a shortcut in the Startup folder running `procedura gui --tray`).
    Without it (or -NoAutostart), an upgrade keeps the Startup shortcut an earlier install made.
.PARAMETER NoAutostart
    Remove the Startup shortcut an earlier install made.
.PARAMETER Python
    The Python 3.11+ to use (default: the `py` launcher's newest 3.11+, else python.exe on PATH).

.EXAMPLE
    powershell -ExecutionPolicy Bypass -File installers\windows\install.ps1 -Autostart
#>
[CmdletBinding(DefaultParameterSetName = 'Source')]
param(
    [Parameter(ParameterSetName = 'Source')][string]$Source = (Resolve-Path "$PSScriptRoot\..\..").Path,
    [Parameter(ParameterSetName = 'Wheel', Mandatory = $true)][string]$Wheel,
    [switch]$Autostart,
    [switch]$NoAutostart,
    [string]$Python
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

function Fail([string]$Message) {
    [Console]::Error.WriteLine("install.ps1: error: $Message")
    exit 1
}
function Say([string]$Message) { Write-Host "==> $Message" }

$AppDir = Join-Path $env:LOCALAPPDATA 'Programs\Procedura'
$Venv = Join-Path $AppDir 'venv'
$BinDir = Join-Path $AppDir 'bin'
$Launcher = Join-Path $BinDir 'procedura.cmd'
$Manifest = Join-Path $AppDir 'install-manifest.txt'
$Programs = [Environment]::GetFolderPath('Programs')        # Start menu\Programs (this user)
$Startup = [Environment]::GetFolderPath('Startup')
$MenuShortcut = Join-Path $Programs 'Procedura.lnk'
$StartupShortcut = Join-Path $Startup 'Procedura.lnk'

# ── Python ───────────────────────────────────────────────────────────────────────────────────────
function Test-Python([string[]]$Command) {
    try {
        & $Command[0] @($Command | Select-Object -Skip 1) -c 'import sys; raise SystemExit(sys.version_info < (3, 11))' 2>$null
        return $LASTEXITCODE -eq 0
    } catch { return $false }
}
if ($Python) {
    $Py = @($Python)
    if (-not (Test-Python $Py)) { Fail "$Python is not a working Python 3.11 or newer" }
} elseif ((Get-Command py -ErrorAction SilentlyContinue) -and (Test-Python @('py', '-3'))) {
    $Py = @('py', '-3')
} elseif ((Get-Command python -ErrorAction SilentlyContinue) -and (Test-Python @('python'))) {
    $Py = @('python')   # beware the Microsoft Store stub, which Test-Python rejects
} else {
    Fail 'no Python 3.11 or newer found; install one from python.org (tick "py launcher") or pass -Python'
}
& $Py[0] @($Py | Select-Object -Skip 1) -c 'import venv, ensurepip' 2>$null
if ($LASTEXITCODE -ne 0) { Fail "$($Py -join ' ') has no venv/ensurepip module; reinstall Python with it" }

if ($Wheel) {
    if (-not (Test-Path $Wheel -PathType Leaf) -or -not $Wheel.EndsWith('.whl')) { Fail "-Wheel ${Wheel}: not a .whl file" }
    $Target = (Resolve-Path $Wheel).Path
} else {
    if (-not (Test-Path (Join-Path $Source 'pyproject.toml'))) { Fail "-Source ${Source}: no pyproject.toml there" }
    $Target = (Resolve-Path $Source).Path
}

# ── The program: a fresh environment, moved into place only once pip succeeded ──────────────────
New-Item -ItemType Directory -Force -Path $AppDir | Out-Null
$Staging = Join-Path $AppDir (".venv-new." + [guid]::NewGuid().ToString('N').Substring(0, 8))
try {
    Say "Creating the environment with $($Py -join ' ')"
    & $Py[0] @($Py | Select-Object -Skip 1) -m venv $Staging
    if ($LASTEXITCODE -ne 0) { Fail 'python -m venv failed (see above)' }
    $StagingPython = Join-Path $Staging 'Scripts\python.exe'
    Say "Installing Procedura from $Target (pip; this takes a minute)"
    $env:PIP_NO_INPUT = '1'
    & $StagingPython -m pip install --quiet --disable-pip-version-check $Target
    if ($LASTEXITCODE -ne 0) { Fail "pip could not install Procedura from $Target (see above); nothing was changed" }
    & $StagingPython -P -m desktop_app --version | Out-Null
    if ($LASTEXITCODE -ne 0) { Fail 'the new environment cannot run Procedura (see above); nothing was changed' }
    $Icons = & $StagingPython -P -c 'from desktop_app.resources import resource_path; print(resource_path("icons"))'

    # Swap in the new environment. Like on Linux the launcher runs "python -m desktop_app", since
    # a moved environment's Scripts\*.exe still point at the old path.
    if (Test-Path $Venv) {
        $Old = "$Venv.old"
        if (Test-Path $Old) { Remove-Item -Recurse -Force $Old }
        Rename-Item $Venv $Old      # fails if Procedura is running: close it and try again
    }
    Rename-Item $Staging $Venv
    $Staging = $null
    if ((Get-Variable Old -ErrorAction SilentlyContinue) -and (Test-Path $Old)) { Remove-Item -Recurse -Force $Old }
} finally {
    if ($Staging -and (Test-Path $Staging)) { Remove-Item -Recurse -Force $Staging }
}
$VenvPython = Join-Path $Venv 'Scripts\python.exe'
$VenvPythonW = Join-Path $Venv 'Scripts\pythonw.exe'
$Created = New-Object System.Collections.Generic.List[string]
$Created.Add("dir $Venv")

# ── Launcher, icon, shortcuts ────────────────────────────────────────────────────────────────────
New-Item -ItemType Directory -Force -Path $BinDir | Out-Null
Set-Content -Path $Launcher -Encoding ASCII -Value @(
    '@echo off',
    "rem Installed by Procedura's installers\windows\install.ps1",
    "`"$VenvPython`" -P -m desktop_app %*"
)
$Created.Add("file $Launcher")
Copy-Item (Join-Path $PSScriptRoot 'uninstall.ps1') (Join-Path $AppDir 'uninstall.ps1') -Force
$Created.Add("file $(Join-Path $AppDir 'uninstall.ps1')")
# Shortcuts take .ico files: resources/icons/procedura.ico (16-256 px, rendered by `make icons`).
$IconFile = Join-Path $Icons 'procedura.ico'

$Shell = New-Object -ComObject WScript.Shell
function New-Shortcut([string]$Path, [string]$Arguments) {
    $lnk = $Shell.CreateShortcut($Path)
    $lnk.TargetPath = $VenvPythonW     # no console window for the GUI
    $lnk.Arguments = "-P -m desktop_app $Arguments"
    $lnk.WorkingDirectory = $env:USERPROFILE
    $lnk.Description = 'Procedura: turn one demonstration into a reusable procedure'
    if (Test-Path $IconFile) { $lnk.IconLocation = $IconFile }
    $lnk.Save()
    $Created.Add("file $Path")
}
New-Shortcut $MenuShortcut 'gui'
# An upgrade keeps the autostart choice of the install before, unless told otherwise.
$HadAutostart = (Test-Path $Manifest) -and (Select-String -Path $Manifest -SimpleMatch "file $StartupShortcut" -Quiet)
if ($Autostart -or ($HadAutostart -and -not $NoAutostart)) {
    New-Shortcut $StartupShortcut 'gui --tray'
} elseif (Test-Path $StartupShortcut) {
    Remove-Item -Force $StartupShortcut     # an earlier install's autostart, not wanted now
}

# The launcher folder on the user's PATH (HKCU\Environment), once.
$UserPath = [Environment]::GetEnvironmentVariable('Path', 'User')
$Parts = @($UserPath -split ';' | Where-Object { $_ })
if ($Parts -notcontains $BinDir) {
    [Environment]::SetEnvironmentVariable('Path', (($Parts + $BinDir) -join ';'), 'User')
    $Created.Add("path $BinDir")
    Say "Added $BinDir to your PATH (open a new terminal to use it)"
} elseif ((Test-Path $Manifest) -and (Select-String -Path $Manifest -SimpleMatch "path $BinDir" -Quiet)) {
    $Created.Add("path $BinDir")     # added by an earlier install: still ours to remove
}

$Created.Add("file $Manifest")
Set-Content -Path $Manifest -Encoding UTF8 -Value $Created

$Version = (& $VenvPython -P -m desktop_app --version) -split ' ' | Select-Object -Last 1
Say "Installed Procedura $Version"
Say "  program:   $Venv"
Say "  launcher:  $Launcher"
Say "  Start menu: $MenuShortcut"
if ($Autostart) { Say "  autostart: $StartupShortcut" }
Say "  your data: $(Join-Path $env:LOCALAPPDATA 'Procedura') (kept by uninstall.ps1 unless -PurgeData)"
Say "Uninstall with: powershell -ExecutionPolicy Bypass -File `"$(Join-Path $AppDir 'uninstall.ps1')`""
