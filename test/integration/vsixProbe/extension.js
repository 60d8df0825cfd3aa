// The probe contributes nothing; it exists so its test module can run in the extension host.
exports.activate = () => {};
exports.deactivate = () => {};
