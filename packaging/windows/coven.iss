; Inno Setup script for Windows: installs the PyInstaller bundle (dist\coven, built on Windows
; with `make bundle` or the same PyInstaller command), a Start-menu shortcut, and — if the
; person ticks it — start at login through the per-user Run registry key.
; Configured, not built: there is no Windows machine here. Build with: iscc packaging\windows\coven.iss
; Per-user install (no administrator rights), like the app's own data directory.

#define AppName "Coven Desktop"
#define AppVersion "0.1.0"
#define AppExe "coven-desktop.exe"

[Setup]
AppId=io.coven.Desktop
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=The Coven developers
DefaultDirName={localappdata}\Programs\Coven Desktop
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
OutputDir=..\..\dist
OutputBaseFilename=coven-desktop-{#AppVersion}-setup
SetupIconFile=..\..\build\bundle-assets\coven.ico
UninstallDisplayIcon={app}\{#AppExe}
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
; The tray app must not be running while its files are replaced.
CloseApplications=yes

[Tasks]
Name: "startatlogin"; Description: "Start {#AppName} when I sign in"; Flags: unchecked

[Files]
Source: "..\..\dist\coven\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
; The Start menu: the tray app (the `coven` command line stays in {app} for a terminal).
Name: "{userprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Run your routines on time"

[Registry]
; Start at login: the same switch as the tray menu's "Start at login" would write.
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; \
  ValueName: "{#AppName}"; ValueData: """{app}\{#AppExe}"""; Flags: uninsdeletevalue; \
  Tasks: startatlogin

[Run]
Filename: "{app}\{#AppExe}"; Description: "Start {#AppName} now"; Flags: nowait postinstall skipifsilent
