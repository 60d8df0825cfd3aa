// `npm start` opens a fresh profile, where the Toolbelt icon would sit unnoticed in the activity
// bar: show its views once, beside the demo's README.
const vscode = require('vscode');

exports.activate = () => {
	void vscode.commands.executeCommand('workbench.view.extension.toolbelt');
};
