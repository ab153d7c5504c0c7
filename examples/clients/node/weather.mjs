// weatherAgent is the agent of the Agents SDK tests: one function tool,
// get_weather, whose calls are pushed to calls. The offline provider calls
// the tool a prompt names ("get_weather Paris") and then quotes its result.
import { Agent, tool } from '@openai/agents';
import { z } from 'zod';

export function weatherAgent(model, calls) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `sunny in ${city}`;
    },
  });
  return new Agent({ name: 'Weather', instructions: 'Use get_weather to answer.', model, tools: [getWeather] });
}
