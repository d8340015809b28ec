import { render } from 'preact';
import { App } from './app.js';
import './styles/app.css';

render(<App />, document.getElementById('app')!);
