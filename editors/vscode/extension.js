// The smallest VS Code client for `gpulint lsp`: start the server over stdio for YAML
// documents, saved or not; everything else (diagnostics, quick fixes, hover, completion)
// comes from the server.
"use strict";
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("gpulint")
    .get("command", ["gpulint", "lsp"]);
  client = new LanguageClient(
    "gpulint",
    "gpulint",
    { command, args, transport: TransportKind.stdio },
    {
      documentSelector: [
        { scheme: "file", language: "yaml" },
        { scheme: "untitled", language: "yaml" },
      ],
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
