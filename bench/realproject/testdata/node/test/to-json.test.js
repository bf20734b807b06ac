'use strict'

const test = require('node:test')
const assert = require('node:assert')
const { createError } = require('..')
const { errorToJSON } = require('../lib/to-json')

test('errorToJSON keeps name, code, message and statusCode', () => {
  const Gone = createError('GONE', 'the %s is gone', 410)
  assert.deepStrictEqual(errorToJSON(new Gone('page')), {
    name: 'FastifyError', code: 'GONE', message: 'the page is gone', statusCode: 410
  })
})

test('errorToJSON follows causes', () => {
  const Wrapped = createError('WRAPPED', 'wrapped')
  const err = new Wrapped({ cause: new TypeError('bad type') })
  assert.deepStrictEqual(errorToJSON(err), {
    name: 'FastifyError',
    code: 'WRAPPED',
    message: 'wrapped',
    statusCode: 500,
    cause: { name: 'TypeError', message: 'bad type' }
  })
})
