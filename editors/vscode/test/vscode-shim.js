'use strict';
// A minimal stand-in for the `vscode` module, enough for the extension's activate() and
// vscode-languageclient's start: settings, open documents, diagnostics collections and
// provider registrations are real objects the test reads back; what the client only
// registers (providers, listeners) is recorded and does nothing.
const path = require('path');
const { pathToFileURL, fileURLToPath } = require('url');

function createShim({ settings = {}, documents = [], workspaceFolder } = {}) {
    const record = { registered: [], messages: [], diagnostics: {}, unknown: new Set(), commands: [], output: [] };

    class Disposable {
        constructor(fn) { this._fn = fn; }
        static from(...items) { return new Disposable(() => items.forEach((i) => i && i.dispose && i.dispose())); }
        dispose() { if (this._fn) { this._fn(); this._fn = undefined; } }
    }
    class EventEmitter {
        constructor() { this._listeners = []; this.event = (fn, thisArg) => {
            const entry = thisArg ? fn.bind(thisArg) : fn; this._listeners.push(entry);
            return new Disposable(() => { this._listeners = this._listeners.filter((l) => l !== entry); });
        }; }
        fire(value) { this._listeners.slice().forEach((l) => l(value)); }
        dispose() { this._listeners = []; }
    }
    class Uri {
        constructor(scheme, fsPath, str) { this.scheme = scheme; this.fsPath = fsPath; this.path = fsPath; this._str = str; }
        static file(p) { return new Uri('file', p, pathToFileURL(p).href); }
        static parse(s) { return s.startsWith('file:') ? Uri.file(fileURLToPath(s)) : new Uri(s.split(':')[0], s, s); }
        toString() { return this._str; }
        toJSON() { return this._str; }
        with() { return this; }
    }
    class Position {
        constructor(line, character) { this.line = line; this.character = character; }
        isBefore(o) { return this.line < o.line || (this.line === o.line && this.character < o.character); }
        isEqual(o) { return this.line === o.line && this.character === o.character; }
    }
    class Range {
        constructor(a, b, c, d) {
            if (typeof a === 'number') { a = new Position(a, b); b = new Position(c, d); }
            this.start = a; this.end = b;
        }
        get isEmpty() { return this.start.isEqual(this.end); }
    }
    class Location { constructor(uri, range) { this.uri = uri; this.range = range; } }
    class Diagnostic { constructor(range, message, severity) { this.range = range; this.message = message; this.severity = severity; } }
    class DiagnosticRelatedInformation { constructor(location, message) { this.location = location; this.message = message; } }
    class MarkdownString { constructor(value) { this.value = value || ''; } appendMarkdown(v) { this.value += v; return this; } }
    class CancellationError extends Error {}
    class CancellationTokenSource {
        constructor() { this._emitter = new EventEmitter(); const self = this;
            this.token = { isCancellationRequested: false, onCancellationRequested: this._emitter.event };
            this.cancel = () => { self.token.isCancellationRequested = true; self._emitter.fire(); };
        }
        dispose() { this._emitter.dispose(); }
    }
    class CodeActionKind {
        constructor(value) { this.value = value; }
        append(part) { return new CodeActionKind(this.value ? `${this.value}.${part}` : part); }
        contains(other) { return other.value === this.value || other.value.startsWith(`${this.value}.`); }
    }
    for (const kind of ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports', 'source.fixAll', 'notebook']) {
        const name = kind === '' ? 'Empty' : kind.split('.').map((p) => p[0].toUpperCase() + p.slice(1)).join('');
        CodeActionKind[name] = new CodeActionKind(kind);
    }

    // What the client registers: a function returning a Disposable, recorded by name.
    const registrar = (area, name) => (...args) => {
        record.registered.push(`${area}.${name}`);
        return new Disposable(() => {});
    };
    const namespace = (area, known) => new Proxy(known, {
        get(target, prop) {
            if (prop in target || typeof prop === 'symbol') { return target[prop]; }
            if (/^(register|on|create)/.test(prop)) { return registrar(area, prop); }
            record.unknown.add(`${area}.${prop}`);
            return undefined;
        },
    });

    const diagnosticCollection = (name) => {
        const entries = new Map();
        return {
            name,
            set(uri, diags) {
                const store = (u, d) => {
                    entries.set(u.toString(), d || []);
                    record.diagnostics[u.toString()] = (d || []).map((x) => ({
                        message: x.message, severity: x.severity, source: x.source,
                        code: x.code && typeof x.code === 'object' ? x.code.value : x.code,
                        codeDescription: x.code && typeof x.code === 'object' && x.code.target ? String(x.code.target) : undefined,
                        range: [x.range.start.line, x.range.start.character, x.range.end.line, x.range.end.character],
                        relatedInformation: (x.relatedInformation || []).map((r) => ({ message: r.message, line: r.location.range.start.line })),
                    }));
                };
                if (Array.isArray(uri)) { uri.forEach(([u, d]) => store(u, d)); } else { store(uri, diags); }
            },
            delete(uri) { entries.delete(uri.toString()); },
            clear() { entries.clear(); },
            get(uri) { return entries.get(uri.toString()); },
            has(uri) { return entries.has(uri.toString()); },
            forEach(fn) { entries.forEach((d, u) => fn(Uri.parse(u), d, this)); },
            dispose() { entries.clear(); },
        };
    };

    const textDocuments = documents.map(({ file, languageId, text }) => {
        const lines = text.split('\n');
        return {
            uri: Uri.file(file), fileName: file, languageId, version: 1, isClosed: false, isDirty: false, isUntitled: false,
            lineCount: lines.length, eol: 1, getText: () => text,
            lineAt: (n) => ({ text: lines[typeof n === 'number' ? n : n.line] }),
        };
    });

    const configuration = (section) => ({
        get(key, fallback) {
            const full = section ? `${section}.${key}` : key;
            return Object.prototype.hasOwnProperty.call(settings, full) ? settings[full] : fallback;
        },
        has(key) { return Object.prototype.hasOwnProperty.call(settings, section ? `${section}.${key}` : key); },
        inspect() { return undefined; },
        update() { return Promise.resolve(); },
    });

    const folder = workspaceFolder ? { uri: Uri.file(workspaceFolder), name: path.basename(workspaceFolder), index: 0 } : undefined;
    const outputChannel = (name) => ({
        name, append: (v) => record.output.push(v), appendLine: (v) => record.output.push(v), replace() {}, clear() {},
        show() {}, hide() {}, dispose() {},
        trace: (v) => record.output.push(v), debug: (v) => record.output.push(v), info: (v) => record.output.push(v),
        warn: (v) => record.output.push(v), error: (v) => record.output.push(v), onDidChangeLogLevel: () => new Disposable(() => {}),
    });
    const message = (level) => (text, ...items) => { record.messages.push({ level, text }); return Promise.resolve(undefined); };

    const vscode = {
        version: '1.91.0',
        env: { appName: 'vscode-shim', language: 'en', machineId: 'shim', sessionId: 'shim', openExternal: () => Promise.resolve(true) },
        Disposable, EventEmitter, Uri, Position, Range, Location, Diagnostic, DiagnosticRelatedInformation, MarkdownString,
        CancellationError, CancellationTokenSource, CodeActionKind,
        DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
        DiagnosticTag: { Unnecessary: 1, Deprecated: 2 },
        ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
        TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
        FileType: { Unknown: 0, File: 1, Directory: 2, SymbolicLink: 64 },
        TabInputText: class {}, TabInputTextDiff: class {}, TabInputCustom: class {}, TabInputNotebook: class {},
        workspace: namespace('workspace', {
            getConfiguration: configuration,
            workspaceFolders: folder ? [folder] : undefined,
            textDocuments,
            notebookDocuments: [],
            createFileSystemWatcher: (glob) => { record.registered.push(`workspace.createFileSystemWatcher(${glob})`);
                const never = () => new Disposable(() => {});
                return { onDidCreate: never, onDidChange: never, onDidDelete: never, dispose() {} }; },
            getWorkspaceFolder: () => folder,
            applyEdit: () => Promise.resolve(true),
        }),
        window: namespace('window', {
            createOutputChannel: outputChannel,
            showErrorMessage: message('error'), showWarningMessage: message('warning'), showInformationMessage: message('information'),
            activeTextEditor: undefined, visibleTextEditors: [],
            tabGroups: { all: [], onDidChangeTabs: () => new Disposable(() => {}), onDidChangeTabGroups: () => new Disposable(() => {}) },
            withProgress: (_options, task) => task({ report() {} }, new CancellationTokenSource().token),
        }),
        languages: namespace('languages', {
            createDiagnosticCollection: diagnosticCollection,
            match: (selector, document) => {
                const list = Array.isArray(selector) ? selector : [selector];
                return list.some((s) => (typeof s === 'string' ? s === document.languageId
                    : (!s.language || s.language === document.languageId) && (!s.scheme || s.scheme === document.uri.scheme))) ? 10 : 0;
            },
        }),
        commands: namespace('commands', {
            registerCommand: (name) => { record.commands.push(name); return new Disposable(() => {}); },
            executeCommand: () => Promise.resolve(undefined),
        }),
        extensions: namespace('extensions', { all: [], getExtension: () => undefined }),
    };
    // Classes the client extends or builds (CompletionItem, CodeAction, ...): each keeps
    // its constructor's arguments; other names are recorded and undefined.
    const classes = {};
    const module = new Proxy(vscode, {
        get(target, prop) {
            if (prop in target || typeof prop === 'symbol') { return target[prop]; }
            if (/^[A-Z]/.test(prop) && !/Kind$|Tag$|Reason$|Mode$/.test(prop)) {
                classes[prop] = classes[prop] || { [prop]: class { constructor(...args) { this.args = args; } } }[prop];
                return classes[prop];
            }
            record.unknown.add(String(prop));
            return undefined;
        },
    });
    return { vscode: module, record };
}

module.exports = { createShim };
