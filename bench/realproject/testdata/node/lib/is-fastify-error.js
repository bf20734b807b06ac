'use strict'

const { FastifyError } = require('..')

// isFastifyError tells whether err was made by createError, and, when code is
// given, whether it carries that code (codes are upper-cased by createError).
function isFastifyError (err, code) {
  if (!(err instanceof FastifyError)) return false
  return code === undefined || err.code === String(code).toUpperCase()
}

module.exports = { isFastifyError }
