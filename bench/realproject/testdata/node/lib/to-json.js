'use strict'

// errorToJSON gives the fields of an error that can be sent to a client:
// name, code, message, statusCode when set, and its cause, followed through
// nested errors.
function errorToJSON (err) {
  const out = { name: err.name, message: err.message }
  if (err.code !== undefined) out.code = err.code
  if (err.statusCode !== undefined) out.statusCode = err.statusCode
  if (err.cause !== undefined) {
    out.cause = err.cause instanceof Error ? errorToJSON(err.cause) : err.cause
  }
  return out
}

module.exports = { errorToJSON }
