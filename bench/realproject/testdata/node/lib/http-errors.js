'use strict'

const { createError } = require('..')
const { isFastifyError } = require('./is-fastify-error')
const { errorToJSON } = require('./to-json')

// defineErrors makes one error constructor per entry of defs, which maps a
// code to [message, statusCode].
function defineErrors (defs) {
  const out = {}
  for (const [code, [message, statusCode]] of Object.entries(defs)) {
    out[code] = createError(code, message, statusCode)
  }
  return out
}

// errorResponse turns any thrown value into a status code and a JSON body;
// only errors made by createError say what went wrong.
function errorResponse (err) {
  if (isFastifyError(err)) {
    return { statusCode: err.statusCode || 500, body: errorToJSON(err) }
  }
  return {
    statusCode: 500,
    body: { name: 'Error', code: 'FST_ERR_INTERNAL', message: 'Internal Server Error' }
  }
}

module.exports = { defineErrors, errorResponse }
