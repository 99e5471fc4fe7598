// The recorded provider streams the page can replay: real responses from the
// conformance corpus (tests/fixtures/conformance/, recorded from the live
// APIs; see its README for provenance). The mock serves a case's exact bytes
// (`x-mock-fixture`), and skyl decodes them here in the page.

/** [{ id: "<adapter>/<case>", provider, title, shows }] */
export const RECORDINGS = [
  {
    id: "anthropic/anthropic-web-search-tool.1.stream",
    title: "Anthropic · web search with citations",
    shows:
      "Anthropic runs web_search itself: its server_tool_use and results are provider parts kept for replay, and the answer's text carries citations_delta sources.",
  },
  {
    id: "anthropic/anthropic-clear-thinking.1.stream",
    title: "Anthropic · extended thinking",
    shows:
      "A thinking block streamed as reasoning; its signature arrives last in a signature_delta and is kept on the reasoning part, as a replay needs.",
  },
  {
    id: "gemini/google-stream-no-args-tool-call.stream",
    title: "Gemini (Vertex) · four parallel calls, streamed arguments",
    shows:
      "Four calls whose arguments stream as partialArgs across parts, one with no args at all, with thought text and a thought signature. Each call is handed out whole, once, when its closing part arrives.",
  },
  {
    id: "gemini/google-tool-call-gemini3.stream",
    title: "Gemini 3 · a call with a thought signature",
    shows:
      "The functionCall carries a thoughtSignature, kept on the call: Gemini 3 refuses a replayed call without it.",
  },
  {
    id: "openaicompat/deepseek-tool-call.stream",
    title: "DeepSeek · reasoning, then a tool call",
    shows: "reasoning_content deltas as reasoning, then a streamed call handed out at the finish.",
  },
  {
    id: "openaicompat/mistral-incremental-tool-call.stream",
    title: 'Mistral · a continuation delta with "name": ""',
    shows: "A later delta repeats the call with an empty name: the name must not be cleared.",
  },
  {
    id: "openaicompat/perplexity-citations.stream",
    title: "Perplexity · search citations",
    shows: "An OpenAI-compatible server's own fields (citations, search results) beside the text.",
  },
  {
    id: "openai/azure-model-router.1.stream",
    title: "Azure OpenAI · model router, content filters",
    shows:
      "The first chunk is a prompt_filter_results chunk with no choices and empty id and model; the router picks the model.",
  },
  {
    id: "responses/openai-web-search-tool.1.stream",
    title: "OpenAI Responses · web search with annotations",
    shows:
      "Hosted web_search_call items are provider parts; url_citation annotations arrive on the output text.",
  },
  {
    id: "responses/azure-image-generation-tool.1.stream",
    title: "Azure Responses · a generated image, its partial image first",
    shows:
      "The image_generation tool's partial_image comes as a file_partial event, then the image as one file (the recording's image is a 1x1 PNG): the copies in output_item.done and response.completed are the same file, not three.",
  },
  {
    id: "responses/open-responses-lmstudio-tool-call.1.stream",
    title: "LM Studio (Open Responses) · raw reasoning, a call",
    shows:
      "Raw reasoning_text deltas, and a function call whose arguments arrive only in function_call_arguments.done.",
  },
  {
    id: "responses/azure-reasoning-encrypted-content.1.stream",
    title: "Azure Responses · encrypted reasoning, a whole tool loop",
    shows:
      "Four responses of a tool loop in one recording; reasoning items carry encrypted_content, kept for replay with store: false.",
  },
].map((r) => ({ ...r, provider: r.id.split("/")[0] }));
