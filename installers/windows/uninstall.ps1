<#
.SYNOPSIS
    Remove what install.ps1 installed: exactly what its manifest lists.

.DESCRIPTION
    Reads %LOCALAPPDATA%\Programs\Procedura\install-manifest.txt and removes the files, the
    environment and the PATH entry listed there. Your data in %LOCALAPPDATA%\Procedura stays
    unless -PurgeData (which asks first unless -Yes). A PROCEDURA_HOME you set is never touched.

    NOT TESTED: written with care but never run (the project's CI runs Linux only).

.EXAMPLE
    powershell -ExecutionPolicy Bypass -File "$env:LOCALAPPDATA\Programs\Procedura\uninstall.ps1"
#>
param([switch]$PurgeData, [switch]$Yes)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

function Fail([string]$Message) {
    [Console]::Error.WriteLine("uninstall.ps1: error: $Message")
    exit 1
}
function Say([string]$Message) { Write-Host "==> $Message" }

$AppDir = Join-Path $env:LOCALAPPDATA 'Programs\Procedura'
$Manifest = Join-Path $AppDir 'install-manifest.txt'
$UserData = Join-Path $env:LOCALAPPDATA 'Procedura'

if ($PurgeData -and (Test-Path $UserData) -and -not $Yes) {
    $answer = Read-Host "Delete all your Procedura data in $UserData? [y/N]"
    if ($answer -notmatch '^(y|yes)$') { Fail 'not confirmed; nothing was removed' }
}

if (Test-Path $Manifest) {
    foreach ($line in Get-Content $Manifest) {
        if (-not $line) { continue }
        $kind, $path = $line -split ' ', 2
        switch ($kind) {
            'file' {
                if ($path -ne $Manifest -and (Test-Path $path)) { Remove-Item -Force $path }
            }
            'dir' {
                # Only ever the environment inside the installer's own folder.
                if (-not $path.StartsWith("$AppDir\")) { Fail "the manifest lists $path, outside $AppDir; not removing it" }
                if (Test-Path $path) { Remove-Item -Recurse -Force $path }
            }
            'path' {
                $parts = @([Environment]::GetEnvironmentVariable('Path', 'User') -split ';' | Where-Object { $_ -and $_ -ne $path })
                [Environment]::SetEnvironmentVariable('Path', ($parts -join ';'), 'User')
            }
            default { Fail "${Manifest}: unexpected line '$line'" }
        }
        Say "Removed $path"
    }
    Remove-Item -Force $Manifest
    # The bin folder and the installer's folder, if now empty. (This script itself was listed and
    # removed above; PowerShell has already read it.)
    foreach ($dir in @((Join-Path $AppDir 'bin'), $AppDir)) {
        if ((Test-Path $dir) -and -not (Get-ChildItem -Force $dir)) { Remove-Item -Force $dir }
    }
    Say 'Procedura is uninstalled'
} else {
    Say "Procedura is not installed here (no $Manifest); nothing to remove"
}

if ($PurgeData) {
    if (Test-Path $UserData) {
        Remove-Item -Recurse -Force $UserData
        Say "Deleted your data in $UserData"
    }
} elseif (Test-Path $UserData) {
    Say "Your data stays in $UserData (delete it with -PurgeData)"
}
