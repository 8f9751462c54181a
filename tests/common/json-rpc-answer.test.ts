// The one reading of a JSON-RPC answer body that both clients use (common/json-rpc-answer.ts): pure, no transport.
import { expect } from 'chai';
import { readJsonRpcAnswer } from '../../common/json-rpc-answer';
import { RPC_CODES } from '../../common/errors/codes';

describe('common/json-rpc-answer', () => {
  it('gives the result, null included, and parses with the given parser', () => {
    expect(readJsonRpcAnswer('getSlot', '{"jsonrpc":"2.0","id":1,"result":42}')).to.deep.equal({
      ok: true,
      result: 42,
    });
    expect(readJsonRpcAnswer('getTransaction', '{"jsonrpc":"2.0","id":1,"result":null}')).to.deep.equal({
      ok: true,
      result: null,
    });
    const exact = (t: string) => JSON.parse(t.replace(/(\d{17,})/g, '"$1"'));
    expect(readJsonRpcAnswer('getBalance', '{"result":18446744073709551615}', exact)).to.deep.equal({
      ok: true,
      result: '18446744073709551615',
    });
  });

  it('an error answer: ERROR_RESPONSE with the node’s code, or null when it gave none', () => {
    expect(
      readJsonRpcAnswer('getBlock', '{"jsonrpc":"2.0","id":1,"error":{"code":-32007,"message":"Slot 5 was skipped"}}'),
    ).to.deep.equal({
      ok: false,
      code: RPC_CODES.ERROR_RESPONSE,
      message: 'getBlock: Slot 5 was skipped',
      context: { method: 'getBlock', rpcCode: -32007 },
    });
    expect(readJsonRpcAnswer('getBlock', '{"error":{"message":"busy"},"result":1}')).to.deep.include({
      code: RPC_CODES.ERROR_RESPONSE,
      context: { method: 'getBlock', rpcCode: null },
    });
  });

  it('MALFORMED_RESPONSE for what is no JSON-RPC answer (the head of a non-JSON body kept)', () => {
    const cases: Array<[string, string]> = [
      ['<html>busy</html>', 'getSlot: response is not JSON'],
      ['[1]', 'getSlot: response is not a JSON-RPC object'],
      ['null', 'getSlot: response is not a JSON-RPC object'],
      ['"x"', 'getSlot: response is not a JSON-RPC object'],
      ['{"jsonrpc":"2.0","id":1}', 'getSlot: response has neither result nor error'],
    ];
    for (const [body, message] of cases) {
      const a = readJsonRpcAnswer('getSlot', body);
      expect(a, body).to.deep.include({ ok: false, code: RPC_CODES.MALFORMED_RESPONSE, message });
    }
    expect(readJsonRpcAnswer('getSlot', '<html>busy</html>')).to.have.nested.property(
      'context.head',
      '<html>busy</html>',
    );
  });
});
